import { describe, expect, it } from 'vitest'
import { DEFAULT_YIELD_POLICY, lagTimeMs, nextShare, resolveYieldPolicy, type LiveObservation } from './yield-policy.ts'

const policy = resolveYieldPolicy()
const keepingUp: LiveObservation = { lagRecords: 20, liveRatePerSecond: 500, apiLatencyMs: 5 }

describe('the backfill yield policy', () => {
  it('reads the live lag as time: lag records over the live rate', () => {
    expect(lagTimeMs({ lagRecords: 50, liveRatePerSecond: 500, apiLatencyMs: 0 })).toBe(100)
    expect(lagTimeMs({ lagRecords: 0, liveRatePerSecond: 0, apiLatencyMs: 0 })).toBe(0)
  })

  it('does not stop for ever on a lag that does not move (no live records arriving): only the record bound applies', () => {
    const stale = { lagRecords: 300, liveRatePerSecond: 0, apiLatencyMs: 0 }
    expect(lagTimeMs(stale)).toBe(0)
    expect(nextShare(policy, 0.5, stale)).toMatchObject({ share: 0.55, reason: undefined })
    expect(nextShare(policy, 0.5, { ...stale, lagRecords: 5_000 })).toMatchObject({ share: 0, state: 'stopped' })
  })

  it('halves the share while the live path is behind its target, down to the smallest share', () => {
    const behind = { lagRecords: 100, liveRatePerSecond: 500, apiLatencyMs: 5 } // 200 ms
    const d = nextShare(policy, 1, behind)
    expect(d).toMatchObject({ share: 0.5, state: 'slowed', lagMs: 200 })
    expect(d.reason).toMatch(/200 ms behind/)
    let share = 1
    for (let i = 0; i < 20; i++) share = nextShare(policy, share, behind).share
    expect(share).toBe(policy.minShare)
  })

  it('stops at the stop lag (as time or as records) and restarts at the smallest share', () => {
    expect(nextShare(policy, 1, { lagRecords: 600, liveRatePerSecond: 500, apiLatencyMs: 0 })).toMatchObject({ share: 0, state: 'stopped' })
    expect(nextShare(policy, 1, { lagRecords: 5_000, liveRatePerSecond: 1e9, apiLatencyMs: 0 })).toMatchObject({ share: 0, state: 'stopped' })
    expect(nextShare(policy, 0, keepingUp).share).toBe(policy.minShare)
  })

  it('takes the budget back a step per look while the live path keeps up, up to the full share', () => {
    const d = nextShare(policy, 0.5, keepingUp)
    expect(d.share).toBeCloseTo(0.55)
    expect(d).toMatchObject({ state: 'slowed', reason: undefined })
    expect(nextShare(policy, 0.98, keepingUp)).toMatchObject({ share: 1, state: 'full' })
  })

  it('slows down when the API answers the backfill slowly, even with no live lag', () => {
    const d = nextShare(policy, 1, { lagRecords: 0, liveRatePerSecond: 0, apiLatencyMs: 2_500 })
    expect(d).toMatchObject({ share: 0.5, state: 'slowed' })
    expect(d.reason).toMatch(/enrichment API/)
    expect(nextShare({ ...policy, maxApiLatencyMs: 0 }, 1, { lagRecords: 0, liveRatePerSecond: 0, apiLatencyMs: 9_999 }).share).toBe(1)
  })

  it('is data: overrides merge over the defaults and are checked', () => {
    expect(resolveYieldPolicy({ targetLagMs: 50 })).toEqual({ ...DEFAULT_YIELD_POLICY, targetLagMs: 50 })
    expect(() => resolveYieldPolicy({ stopLagMs: 50 })).toThrow(/stopLagMs must be greater than targetLagMs/)
    expect(() => resolveYieldPolicy({ decrease: 1 })).toThrow(/decrease/)
    expect(() => resolveYieldPolicy({ minShare: 0 })).toThrow(/minShare/)
  })
})
