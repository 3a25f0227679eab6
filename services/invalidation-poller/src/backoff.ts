import { backoffDelay as retryDelay, resolveRetryPolicy, type RetryPolicy } from '@tep/kafka'

/**
 * Backoff of the poller's outer loop, as data: the pipeline's `RetryPolicy`
 * with the poller's defaults. The enrichment client already retries a request
 * a few times in-line; this policy governs what happens when it gives up: the
 * poller keeps the same cursor and tries the same page again later (it never
 * skips), waiting longer each time.
 */
export type PollerBackoffPolicy = RetryPolicy

/**
 * 1 s doubling to 60 s, each wait between half and all of that ceiling
 * ("equal jitter"), so a standby that takes over does not hammer the API in
 * lockstep but also never retries immediately.
 */
export const DEFAULT_POLLER_BACKOFF: Readonly<PollerBackoffPolicy> = Object.freeze({
  initialDelayMs: 1_000,
  maxDelayMs: 60_000,
  multiplier: 2,
  jitter: 0.5,
})

/** The defaults with `overrides`, validated (`KafkaConfigError` when inconsistent). */
export function resolvePollerBackoff(overrides: Partial<PollerBackoffPolicy> = {}): PollerBackoffPolicy {
  return resolveRetryPolicy({ ...DEFAULT_POLLER_BACKOFF, ...overrides })
}

/**
 * Wait before retry number `failures` (1-based). A server's Retry-After wins
 * when longer, even beyond `maxDelayMs`: asking again earlier would only be
 * refused again.
 */
export function backoffDelay(
  policy: PollerBackoffPolicy,
  failures: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  return Math.max(retryDelay(policy, failures, random), Math.round(retryAfterMs ?? 0))
}
