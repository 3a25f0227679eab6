import { RefresherConfigError } from './errors.ts'

/**
 * Which table entries the sweep asks to re-fetch: those fetched at least
 * `refreshAfterMs` ago, oldest first, at most `limit` per sweep so that one
 * sweep cannot flood the API (the rest follow in the next sweep).
 */
export function selectStale(
  entries: Iterable<readonly [string, number]>,
  now: number,
  refreshAfterMs: number,
  limit: number,
): { keys: string[]; staleTotal: number } {
  const stale: [string, number][] = []
  for (const [key, fetchedAt] of entries) if (now - fetchedAt >= refreshAfterMs) stale.push([key, fetchedAt])
  stale.sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))
  return { keys: stale.slice(0, limit).map(([key]) => key), staleTotal: stale.length }
}

/**
 * The age at which the sweep re-fetches. The spec allows at most `maxAgeMs`
 * (one week) without invalidations, and ingest stops using older entries, so
 * the sweep must refresh before that: one full sweep interval plus a margin
 * earlier, so an entry re-requested at the last sweep before its limit is
 * re-fetched in time.
 */
export function refreshAfter(maxAgeMs: number, sweepIntervalMs: number, marginMs: number): number {
  const threshold = maxAgeMs - sweepIntervalMs - marginMs
  if (threshold <= 0) {
    throw new RefresherConfigError(
      `REFRESH_MAX_AGE (${maxAgeMs} ms) must exceed SWEEP_INTERVAL (${sweepIntervalMs} ms) plus SWEEP_MARGIN (${marginMs} ms)`,
      { maxAgeMs, sweepIntervalMs, marginMs },
    )
  }
  return threshold
}
