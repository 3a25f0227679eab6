import type { RecordsBatch } from '@platformatic/kafka'

const IS_TRANSACTIONAL = 1 << 4
const IS_CONTROL = 1 << 5
/** Control record key: version (int16) then type (int16), 0 = ABORT, 1 = COMMIT. */
const ABORT_MARKER = 0

interface AbortedTransaction {
  producerId: bigint
  firstOffset: bigint
}

/**
 * Empties the record batches of aborted transactions in one partition of a
 * read_committed fetch response, the way the Java consumer does: walking the
 * batches in offset order, a producer is "aborting" from the first offset of
 * each of its aborted transactions the broker listed until its ABORT marker.
 *
 * @platformatic/kafka 2.12.1 filters with one range per producer id (the last
 * listed), so when one producer had two aborted transactions in a fetch, or two
 * producers' aborted transactions interleave with their markers in another
 * fetch, records of an aborted transaction reached the application (shown by
 * test/kafka/aborted-input-transactions-never-reach-the-pipeline.test.ts).
 * Batches are emptied rather than removed so the stream still advances past them.
 */
export function hideAbortedBatches(
  batches: RecordsBatch[],
  aborted: readonly AbortedTransaction[] | null | undefined,
): RecordsBatch[] {
  if (aborted === null || aborted === undefined || aborted.length === 0) return batches
  const pending = [...aborted].sort((x, y) => (x.firstOffset < y.firstOffset ? -1 : x.firstOffset > y.firstOffset ? 1 : 0))
  const aborting = new Set<bigint>()
  let next = 0
  return batches.map((batch) => {
    const lastOffset = batch.firstOffset + BigInt(batch.lastOffsetDelta)
    while (next < pending.length && pending[next]!.firstOffset <= lastOffset) aborting.add(pending[next++]!.producerId)
    if ((batch.attributes & IS_CONTROL) !== 0) {
      const key = batch.records[0]?.key
      if (key !== undefined && key !== null && key.length >= 4 && key.readInt16BE(2) === ABORT_MARKER)
        aborting.delete(batch.producerId)
      return batch
    }
    if ((batch.attributes & IS_TRANSACTIONAL) !== 0 && aborting.has(batch.producerId)) return { ...batch, records: [] }
    return batch
  })
}
