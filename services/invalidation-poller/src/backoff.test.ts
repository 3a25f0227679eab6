import { describe, expect, it } from 'vitest'
import { backoffDelay, resolvePollerBackoff } from './backoff.ts'
import { InvalidationPollerConfigError } from './errors.ts'

describe('poller backoff', () => {
  const policy = resolvePollerBackoff({ initialDelayMs: 1000, maxDelayMs: 8000, factor: 2 })

  it('grows per failure between half and all of the ceiling, capped', () => {
    expect(backoffDelay(policy, 1, undefined, () => 0)).toBe(500)
    expect(backoffDelay(policy, 1, undefined, () => 1)).toBe(1000)
    expect(backoffDelay(policy, 3, undefined, () => 1)).toBe(4000)
    expect(backoffDelay(policy, 10, undefined, () => 1)).toBe(8000)
  })

  it('honours a longer Retry-After', () => {
    expect(backoffDelay(policy, 1, 30_000, () => 0)).toBe(30_000)
  })

  it('rejects an inconsistent policy', () => {
    expect(() => resolvePollerBackoff({ initialDelayMs: 10, maxDelayMs: 5 })).toThrow(
      InvalidationPollerConfigError,
    )
  })
})
