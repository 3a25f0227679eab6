/**
 * How long a consent waits before its next try, after failures. Pure functions of
 * the failure count, so the owner's schedule and its tests read the same policy.
 */

/** Exponential from 500 ms, capped at `maxBackoffMs`, half of it jittered; never sooner than the bank's Retry-After. */
export function syncBackoffMs(failures: number, retryAfterMs: number | undefined, maxBackoffMs: number): number {
  const exp = Math.min(maxBackoffMs, 500 * 2 ** Math.min(failures - 1, 20))
  const jittered = exp / 2 + (Math.random() * exp) / 2
  return Math.max(jittered, retryAfterMs ?? 0)
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
  return Math.min(TOKEN_WRITE_RETRY_MAX_MS, TOKEN_WRITE_RETRY_MS * 2 ** (failures - 1))
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
