import { backoffDelay } from '@tep/kafka'

/**
 * How long a consent's work waits: before its next try after failures (on
 * @tep/kafka's backoffDelay, as every other retry of the project), and at most
 * while a stopping owner lets running work finish (waitAtMost).
 */

/** Exponential from 500 ms, capped at `maxBackoffMs`, half of it jittered; never sooner than the bank's Retry-After (which may exceed the cap). */
export function syncBackoffMs(failures: number, retryAfterMs: number | undefined, maxBackoffMs: number): number {
  return Math.max(backoffDelay({ initialDelayMs: 500, maxDelayMs: maxBackoffMs, multiplier: 2, jitter: 0.5 }, failures), retryAfterMs ?? 0)
}

/**
 * Rotated tokens whose write failed are retried on their own, this soon and then up to
 * TOKEN_WRITE_RETRY_MAX_MS apart, whatever the consent's sync backoff (up to 5 min): the
 * write needs Kafka only, and until it lands the consents topic holds a refresh token the
 * bank has rotated out. Whoever syncs the consent from the topic next (another instance
 * after a rebalance, e.g. a scale-out) would be refused by the bank. So the exposure is
 * the outage itself, not the outage plus a backoff.
 */
export const TOKEN_WRITE_RETRY_MS = 1_000
export const TOKEN_WRITE_RETRY_MAX_MS = 5_000
/** Longest a stopping owner spends writing kept tokens before it gives the partition up. */
export const TOKEN_WRITE_ON_STOP_MS = 5_000

/** Delay before the next try of a kept token write that failed `failures` times in a row. */
export function tokenWriteRetryMs(failures: number): number {
  return backoffDelay({ initialDelayMs: TOKEN_WRITE_RETRY_MS, maxDelayMs: TOKEN_WRITE_RETRY_MAX_MS, multiplier: 2, jitter: 0 }, failures)
}

/** Resolves when `work` settles or after `limitMs`, whichever is first; the timer never outlives it. */
export async function waitAtMost(work: Promise<unknown>, limitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    work.then(
      () => undefined,
      () => undefined,
    ),
    new Promise((r) => {
      timer = setTimeout(r, limitMs)
    }),
  ])
  if (timer) clearTimeout(timer)
}
