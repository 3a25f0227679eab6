import { describe, expect, it } from 'vitest'
import { KafkaConfigError } from './errors.ts'
import { backoffDelay, DEFAULT_RETRY_POLICY, resolveRetryPolicy } from './retry-policy.ts'

describe('backoffDelay', () => {
  const policy = resolveRetryPolicy({ initialDelayMs: 100, maxDelayMs: 1_000, multiplier: 2, jitter: 0.5 })

  it('grows exponentially up to the cap without jitter', () => {
    const noJitter = () => 0
    expect([1, 2, 3, 4, 5, 6].map((a) => backoffDelay(policy, a, noJitter))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ])
  })

  it('jitters down by at most the jitter fraction', () => {
    expect(backoffDelay(policy, 3, () => 1)).toBe(200)
    expect(backoffDelay(policy, 3, () => 0.5)).toBe(300)
  })

  it('honours Retry-After as a floor, still capped', () => {
    expect(backoffDelay(policy, 1, () => 0, 700)).toBe(700)
    expect(backoffDelay(policy, 1, () => 0, 60_000)).toBe(1000)
  })
})

describe('resolveRetryPolicy', () => {
  it('merges overrides into the defaults', () => {
    expect(resolveRetryPolicy({ maxDelayMs: 5_000 })).toEqual({ ...DEFAULT_RETRY_POLICY, maxDelayMs: 5_000 })
  })

  it('names every invalid field', () => {
    let caught: unknown
    try {
      resolveRetryPolicy({ initialDelayMs: 10, maxDelayMs: 5, multiplier: 0.5, jitter: 2 })
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(KafkaConfigError)
    expect((caught as Error).message).toMatch(
      /maxDelayMs must be >= initialDelayMs.*multiplier must be >= 1.*jitter must be between 0 and 1/,
    )
  })
})
