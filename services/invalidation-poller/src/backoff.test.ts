import { KafkaConfigError } from '@tep/kafka'
import { describe, expect, it } from 'vitest'
import { backoffDelay, DEFAULT_POLLER_BACKOFF, resolvePollerBackoff } from './backoff.ts'

describe('poller backoff', () => {
  const policy = resolvePollerBackoff({ initialDelayMs: 1000, maxDelayMs: 8000 })

  it('grows per failure between half and all of the ceiling, capped', () => {
    expect(backoffDelay(policy, 1, undefined, () => 0)).toBe(1000)
    expect(backoffDelay(policy, 1, undefined, () => 1)).toBe(500)
    expect(backoffDelay(policy, 3, undefined, () => 0)).toBe(4000)
    expect(backoffDelay(policy, 10, undefined, () => 0)).toBe(8000)
  })

  it('defaults to 1 s doubling to 60 s', () => {
    const defaults = resolvePollerBackoff()
    expect(defaults).toEqual(DEFAULT_POLLER_BACKOFF)
    expect(backoffDelay(defaults, 1, undefined, () => 0)).toBe(1000)
    expect(backoffDelay(defaults, 20, undefined, () => 0)).toBe(60_000)
  })

  it('honours a longer Retry-After, even beyond the cap', () => {
    expect(backoffDelay(policy, 1, 30_000, () => 0)).toBe(30_000)
    expect(backoffDelay(policy, 3, 10, () => 0)).toBe(4000)
  })

  it('rejects an inconsistent policy', () => {
    expect(() => resolvePollerBackoff({ initialDelayMs: 10, maxDelayMs: 5 })).toThrow(KafkaConfigError)
  })
})
