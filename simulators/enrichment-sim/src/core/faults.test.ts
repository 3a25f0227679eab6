import { describe, expect, it } from 'vitest'
import { FaultInjector, parseFaults } from './faults.ts'
import { RateLimiter } from './rate-limiter.ts'

describe('parseFaults', () => {
  it('accepts the documented settings and rejects unknown or out-of-range ones with the setting named', () => {
    expect(parseFaults({ latency: { distribution: 'lognormal', medianMs: 3, sigma: 0.5 }, errorRate: 0.1, errorStatus: 502, revokeTokens: true })).toEqual({
      faults: { latency: { distribution: 'lognormal', medianMs: 3, sigma: 0.5 }, errorRate: 0.1, errorStatus: 502 },
      revokeTokens: true,
    })
    expect(() => parseFaults({ errorRate: 2 })).toThrow(/errorRate must be a number from 0 to 1/)
    expect(() => parseFaults({ latency: { distribution: 'pareto' } })).toThrow(/latency.distribution must be/)
    expect(() => parseFaults({ nope: 1 })).toThrow(/unknown fault setting "nope"/)
  })
})

describe('FaultInjector', () => {
  it('applies a counted fault to exactly the next N requests', () => {
    const faults = new FaultInjector(1)
    faults.set({ errorRate: 1, errorStatus: 500, count: 2 })
    expect([faults.decide(), faults.decide(), faults.decide()]).toEqual([{ kind: 'error', status: 500 }, { kind: 'error', status: 500 }, { kind: 'none' }])
  })

  it('draws latency from the configured distribution', () => {
    const faults = new FaultInjector(1)
    faults.set({ latency: { distribution: 'uniform', minMs: 5, maxMs: 10 } })
    const draws = Array.from({ length: 200 }, () => faults.delayMs())
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(5)
    expect(Math.max(...draws)).toBeLessThanOrEqual(10)
    faults.set({ latency: { distribution: 'normal', meanMs: 20, stdDevMs: 2 } })
    const mean = Array.from({ length: 2_000 }, () => faults.delayMs()).reduce((a, b) => a + b, 0) / 2_000
    expect(mean).toBeGreaterThan(19.5)
    expect(mean).toBeLessThan(20.5)
  })

  it('never applies to admin paths and honours pathPrefix', () => {
    const faults = new FaultInjector(1)
    faults.set({ pathPrefix: '/v5/shops' })
    expect([faults.applies('/v5/shops/findByCardTransaction'), faults.applies('/v5/invalidations'), faults.applies('/__admin/stats')]).toEqual([true, false, false])
    faults.set({})
    expect(faults.applies('/__admin/faults')).toBe(false)
  })
})

describe('RateLimiter', () => {
  it('lets a burst of N through per credential, then asks to wait whole seconds', () => {
    const limiter = new RateLimiter(2)
    expect([limiter.take('a', 0), limiter.take('a', 0), limiter.take('a', 0), limiter.take('b', 0)]).toEqual([0, 0, 1, 0])
    expect(limiter.take('a', 500)).toBe(0)
  })
})
