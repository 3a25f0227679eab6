import { describe, expect, it } from 'vitest'
import { HttpConfigError } from './errors.ts'
import {
  DEFAULT_RETRY_POLICY,
  backoffDelayMs,
  parseRetryAfterMs,
  resolveRetryPolicy,
} from './retry-policy.ts'

describe('resolveRetryPolicy', () => {
  it('merges overrides over the defaults without sharing the status list', () => {
    const policy = resolveRetryPolicy({ retries: 1 })
    expect(policy).toMatchObject({ ...DEFAULT_RETRY_POLICY, retries: 1 })
    expect(policy.retryStatuses).toEqual([429, 500, 502, 503, 504])
    expect(policy.retryStatuses).not.toBe(DEFAULT_RETRY_POLICY.retryStatuses)
  })

  it.each([
    [{ retries: -1 }, /retries must be a non-negative integer/],
    [{ retries: 1.5 }, /retries must be a non-negative integer/],
    [{ factor: 0.5 }, /factor must be a number >= 1/],
    [{ initialDelayMs: 500, maxDelayMs: 100 }, /maxDelayMs \(100\) must not be below initialDelayMs \(500\)/],
    [{ retryStatuses: [200] }, /must hold 4xx\/5xx status codes, got 200/],
    [{ maxRetryAfterMs: Number.NaN }, /maxRetryAfterMs must be a non-negative number/],
  ])('rejects %j', (overrides, message) => {
    expect(() => resolveRetryPolicy(overrides)).toThrow(HttpConfigError)
    expect(() => resolveRetryPolicy(overrides)).toThrow(message)
  })
})

describe('backoffDelayMs', () => {
  const policy = resolveRetryPolicy({ initialDelayMs: 100, maxDelayMs: 1_000, factor: 2 })

  it('grows the ceiling exponentially up to maxDelayMs', () => {
    const fixed = { ...policy, jitter: false }
    expect([1, 2, 3, 4, 5, 6].map((r) => backoffDelayMs(fixed, r))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ])
  })

  it('applies full jitter: anywhere from 0 up to and including the ceiling', () => {
    expect(backoffDelayMs(policy, 3, () => 0)).toBe(0)
    expect(backoffDelayMs(policy, 3, () => 0.999_999_9)).toBe(400)
    expect(backoffDelayMs(policy, 3, () => 0.5)).toBe(200)
    for (let i = 0; i < 1_000; i++) {
      const d = backoffDelayMs(policy, 10)
      expect(d).toBeGreaterThanOrEqual(0)
      expect(d).toBeLessThanOrEqual(1_000)
    }
  })
})

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z')

  it('reads delay-seconds', () => {
    expect(parseRetryAfterMs('2', now)).toBe(2_000)
    expect(parseRetryAfterMs([' 0 '], now)).toBe(0)
  })

  it('reads an HTTP-date relative to now and clamps past dates to 0', () => {
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5_000)
    expect(parseRetryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0)
  })

  it('ignores absent and malformed values', () => {
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined()
    expect(parseRetryAfterMs('', now)).toBeUndefined()
    expect(parseRetryAfterMs('-1', now)).toBeUndefined()
    expect(parseRetryAfterMs('1.5', now)).toBeUndefined()
    expect(parseRetryAfterMs('soon', now)).toBeUndefined()
  })
})
