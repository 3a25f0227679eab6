import type { LookupMode } from './lookups.ts'

/** INGEST_CONCURRENCY when unset in batch mode: a budget of 2,000 records with the default 4 partitions. */
export const BATCH_MODE_CONCURRENCY = 500
/** In single mode INGEST_CONCURRENCY is this many times INGEST_API_MAX_CONCURRENT. */
export const SINGLE_MODE_RECORDS_PER_SLOT = 2

/**
 * The first factor of the in-flight budget (INGEST_CONCURRENCY × INGEST_PARTITIONS_CONCURRENTLY)
 * when INGEST_CONCURRENCY is not set.
 *
 * Batch mode needs a large budget: a lookup batch fills only from records in flight
 * (500 entries a call, the next batch filling while one is out). In single mode each
 * record takes one API request slot, so of 2,000 records in flight about
 * INGEST_API_MAX_CONCURRENT (64) are in a request and the rest only wait in the
 * client's limiter queue, each holding its decoded event, its prepared request and
 * eight suspended async frames (about 8 KB, against 4 KB in batch mode). Every
 * scavenge of the young generation copies that live set: with 2,000 waiting the
 * scavenges took three times as long as with 256, for the same work
 * (test/bench/ingest-transform.ts, DECISIONS.md "Ingest CPU per event"). Twice the
 * request slots, times INGEST_PARTITIONS_CONCURRENTLY (4), is 512 records for 64
 * slots: every slot stays busy, with room for a partition whose head record is slow
 * (its finished records hold budget until the head is released).
 */
export function defaultConcurrency(mode: LookupMode, apiMaxConcurrent: number): number {
  if (mode === 'batch') return BATCH_MODE_CONCURRENCY
  return Math.max(1, apiMaxConcurrent * SINGLE_MODE_RECORDS_PER_SLOT)
}
