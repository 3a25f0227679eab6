/**
 * Values the services agree on outside the Avro schemas: one definition, so
 * that the writer and the reader of each cannot drift apart.
 */

/**
 * Header on a raw event that corrects an earlier result of the same transaction
 * (written by the refresher's re-enrichment, copied by transaction-ingest onto
 * the new enriched result).
 */
export const CORRECTION_HEADER = 'tep-correction'
/** Value of `CORRECTION_HEADER` when the earlier result used a handle that was invalidated since. */
export const CORRECTION_HANDLE_INVALIDATED = 'handle-invalidated'

/**
 * `Invalidation.level` the invalidation poller publishes for an item whose feed
 * batch had no `level` (the interface description gives batches only `ids`); the
 * refresher reads it as "something changed, the feed does not say what"
 * (docs/DECISIONS.md, "Invalidation batches that carry only ids").
 */
export const UNKNOWN_LEVEL = 'unknown'
