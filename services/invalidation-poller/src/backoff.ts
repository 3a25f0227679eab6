import { InvalidationPollerConfigError } from './errors.ts'

/**
 * Backoff of the poller's outer loop, as data. The enrichment client already
 * retries a request a few times in-line; this policy governs what happens when
 * it gives up: the poller keeps the same cursor and tries the same page again
 * later (it never skips), waiting longer each time.
 */
export interface PollerBackoffPolicy {
  /** Ceiling of the first wait, in ms. */
  initialDelayMs: number
  /** No wait exceeds this, in ms. */
  maxDelayMs: number
  /** Growth of the ceiling per consecutive failure. */
  factor: number
}

export const DEFAULT_POLLER_BACKOFF: Readonly<PollerBackoffPolicy> = Object.freeze({
  initialDelayMs: 1_000,
  maxDelayMs: 60_000,
  factor: 2,
})

export function resolvePollerBackoff(overrides: Partial<PollerBackoffPolicy> = {}): PollerBackoffPolicy {
  const policy = { ...DEFAULT_POLLER_BACKOFF, ...overrides }
  if (
    !(policy.initialDelayMs >= 0) ||
    !(policy.maxDelayMs >= policy.initialDelayMs) ||
    !(policy.factor >= 1)
  ) {
    throw new InvalidationPollerConfigError(
      `poller backoff needs 0 <= initialDelayMs <= maxDelayMs and factor >= 1, got ${JSON.stringify(policy)}`,
      { ...policy },
    )
  }
  return policy
}

/**
 * Wait before retry number `failures` (1-based): "equal jitter", half fixed and
 * half random, so a standby that takes over does not hammer the API in lockstep
 * but also never retries immediately. A server's Retry-After wins when longer.
 */
export function backoffDelay(
  policy: PollerBackoffPolicy,
  failures: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(
    policy.maxDelayMs,
    policy.initialDelayMs * policy.factor ** Math.max(0, failures - 1),
  )
  const delay = ceiling / 2 + random() * (ceiling / 2)
  return Math.round(Math.max(delay, retryAfterMs ?? 0))
}
