/**
 * The Java consumer's read_committed rule, applied to raw Fetch answers.
 *
 * A read_committed Fetch returns every record below the last stable offset,
 * aborted ones included, plus the list of aborted transactions (producer id and
 * first offset) that overlap the answer; the client must drop the aborted
 * records itself. @platformatic/kafka's stream consumer does not do this at all
 * and KafkaJS 2.2.4 gets it wrong when aborted transactions of two producers
 * interleave (see libs/kafka/src/read-committed-fix.ts), so the checker, which
 * must not trust the pipeline's own client, implements the rule here, as
 * `org.apache.kafka.clients.consumer.internals.CompletedFetch` does: aborted
 * transactions in first-offset order; a producer is "aborting" from the first
 * offset of its aborted transaction until its ABORT marker; its transactional
 * batches in between are dropped; control batches are never records.
 */

/** The parts of a record batch the rule needs (field names as @platformatic/kafka parses them). */
export interface BatchLike<R> {
  firstOffset: bigint
  lastOffsetDelta: number
  attributes: number
  producerId: bigint
  records: R[]
}

export interface AbortedTransaction {
  producerId: bigint
  firstOffset: bigint
}

const TRANSACTIONAL = 0x10
const CONTROL = 0x20
/** Control record key: int16 version, int16 type; type 0 is ABORT, 1 is COMMIT. */
const ABORT_TYPE = 0

export function isAbortMarker(batch: BatchLike<{ key: Buffer | null }>): boolean {
  if ((batch.attributes & CONTROL) === 0) return false
  const key = batch.records[0]?.key
  return key !== null && key !== undefined && key.length >= 4 && key.readInt16BE(2) === ABORT_TYPE
}

/**
 * The batches of one partition's Fetch answer that a read_committed reader may
 * hand out, in order. Control batches and aborted transactional batches are left out.
 */
export function committedBatches<B extends BatchLike<{ key: Buffer | null }>>(
  batches: B[],
  aborted: AbortedTransaction[] | null | undefined,
): B[] {
  const pending = [...(aborted ?? [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
  const aborting = new Set<bigint>()
  const out: B[] = []
  for (const batch of batches) {
    const lastOffset = batch.firstOffset + BigInt(batch.lastOffsetDelta)
    while (pending.length > 0 && pending[0]!.firstOffset <= lastOffset) aborting.add(pending.shift()!.producerId)
    const control = (batch.attributes & CONTROL) !== 0
    if (control) {
      if (isAbortMarker(batch)) aborting.delete(batch.producerId)
      continue
    }
    if ((batch.attributes & TRANSACTIONAL) !== 0 && aborting.has(batch.producerId)) continue
    out.push(batch)
  }
  return out
}
