/**
 * Fixes KafkaJS 2.2.4's read-committed filtering of aborted transactions.
 *
 * A read-committed Fetch answer carries, per partition, the aborted transactions
 * that overlap the records it returns (producer id + first offset); a record is
 * aborted when its producer has entered such a transaction and not yet met that
 * producer's ABORT marker. KafkaJS (`consumer/filterAbortedMessages.js`) assumes the
 * list is sorted by first offset and enters at most one transaction per record,
 * but the broker lists them in the order they were aborted. With two producers'
 * aborted transactions interleaved in one partition, records of one of them reach
 * read-committed readers (checked on a 3.9 broker), and a transaction entered late
 * can hide the same producer's next, committed records.
 *
 * The fix runs where the Fetch answer is parsed, before KafkaJS builds batches:
 * it applies the Java consumer's rule (transactions ordered by first offset, every
 * one whose first offset is reached is entered, an ABORT marker leaves it), flags
 * aborted records as control records, which KafkaJS never hands to the
 * application but still counts for the offset, and empties the list so KafkaJS's
 * own filter has nothing left to get wrong.
 */
import { createRequire } from 'node:module'

const ABORT_MARKER_KEY = Buffer.from([0, 0, 0, 0])

export interface FetchedRecord {
  offset: string
  key: Buffer | null
  isControlRecord?: boolean
  batchContext?: { producerId: string; inTransaction: boolean }
}

export interface AbortedTransaction {
  producerId: string
  firstOffset: string
}

export interface FetchedPartition {
  messages?: FetchedRecord[]
  abortedTransactions?: AbortedTransaction[] | null
}

/** Flags the aborted records of one partition of a read-committed Fetch answer (mutates it). */
export function hideAbortedRecords(partition: FetchedPartition): void {
  const aborted = partition.abortedTransactions
  if (aborted === undefined || aborted === null || aborted.length === 0) return
  partition.abortedTransactions = []
  const messages = partition.messages
  if (messages === undefined) return
  const pending = aborted
    .map((t) => ({ producerId: t.producerId, firstOffset: BigInt(t.firstOffset) }))
    .sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
  const inAborted = new Set<string>()
  let next = 0
  for (const message of messages) {
    const offset = BigInt(message.offset)
    while (next < pending.length && pending[next]!.firstOffset <= offset)
      inAborted.add(pending[next++]!.producerId)
    const context = message.batchContext
    if (context === undefined) continue
    if (message.isControlRecord === true) {
      if (message.key !== null && Buffer.from(message.key).equals(ABORT_MARKER_KEY))
        inAborted.delete(context.producerId)
    } else if (context.inTransaction && inAborted.has(context.producerId)) {
      message.isControlRecord = true
    }
  }
}

type FetchResponseModule = { parse: (data: unknown) => Promise<unknown> }
let installed = false

/**
 * Installs the fix in the process's KafkaJS (idempotent). Fetch versions 4 to 11
 * are the ones with aborted transactions; KafkaJS looks their `parse` up at every
 * request, so replacing it on the cached module takes effect for every client.
 */
export function installReadCommittedFix(): void {
  if (installed) return
  installed = true
  const require = createRequire(import.meta.url)
  for (let version = 4; version <= 11; version++) {
    const module = require(
      `kafkajs/src/protocol/requests/fetch/v${version}/response.js`,
    ) as FetchResponseModule
    const parse = module.parse
    module.parse = async (data: unknown) => {
      const result = (await parse(data)) as { responses?: { partitions?: FetchedPartition[] }[] }
      for (const topic of result.responses ?? [])
        for (const partition of topic.partitions ?? []) hideAbortedRecords(partition)
      return result
    }
  }
}
