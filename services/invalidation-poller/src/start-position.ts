import { InvalidationFeedFormatError } from './errors.ts'

/**
 * A start moment this close to now counts as "now" when item/range cannot say
 * where now is: the feed's head is found instead (INVALIDATIONS_START_AT=now,
 * resolved when the process read its configuration, is a little in the past by
 * the time the poller asks).
 */
export const RECENT_START_MS = 5 * 60_000

/** Probes of `/invalidations` at most: enough for any safe integer id (two per bit). */
export const MAX_HEAD_PROBES = 2 * 54

/**
 * The feed's head without item/range: the smallest id after which no item
 * follows, found with the one documented call, `/invalidations?fromId=...`
 * ("`fromId` (start ID, exclusive)"). "Items after F" only ever turns from
 * true to false as F grows, so an exponential search for an upper bound and a
 * binary search below it find the head in at most two probes per bit of it.
 */
export async function findFeedHead(
  hasItemsAfter: (fromId: number) => Promise<boolean>,
): Promise<{ head: number; probes: number }> {
  let probes = 0
  const probe = async (fromId: number): Promise<boolean> => {
    probes += 1
    return hasItemsAfter(fromId)
  }
  if (!(await probe(0))) return { head: 0, probes }
  let low = 0 // items follow it
  let high = 1
  while (await probe(high)) {
    low = high
    if (high >= Number.MAX_SAFE_INTEGER || probes >= MAX_HEAD_PROBES)
      throw new InvalidationFeedFormatError(
        `the invalidation feed reports items after every id probed (up to ${high}): it seems to ignore fromId; set INVALIDATIONS_START_ID`,
        { probes, high },
      )
    high = Math.min(Number.MAX_SAFE_INTEGER, high * 2)
  }
  while (high - low > 1) {
    const mid = low + Math.floor((high - low) / 2)
    if (await probe(mid)) low = mid
    else high = mid
  }
  return { head: high, probes }
}
