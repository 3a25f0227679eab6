import { describe, expect, it } from 'vitest'
import { hideAbortedRecords, type FetchedPartition, type FetchedRecord } from './read-committed-fix.ts'

const ABORT = Buffer.from([0, 0, 0, 0])
const COMMIT = Buffer.from([0, 0, 0, 1])

function record(offset: number, producerId: string, name: string): FetchedRecord {
  return { offset: String(offset), key: Buffer.from(name), batchContext: { producerId, inTransaction: true } }
}
function marker(offset: number, producerId: string, key: Buffer): FetchedRecord {
  return {
    offset: String(offset),
    key,
    isControlRecord: true,
    batchContext: { producerId, inTransaction: true },
  }
}
/** Keys of the records an application would see (KafkaJS drops control records). */
function visible(partition: FetchedPartition): string[] {
  return (partition.messages ?? []).filter((m) => m.isControlRecord !== true).map((m) => m.key!.toString())
}

describe('hideAbortedRecords', () => {
  it('hides both of two interleaved aborted transactions, listed in abort order (the KafkaJS leak)', () => {
    const partition: FetchedPartition = {
      messages: [
        record(0, 'B', 'b0'),
        record(1, 'A', 'a0'),
        marker(2, 'A', ABORT),
        record(3, 'B', 'b1'),
        marker(4, 'B', ABORT),
        { offset: '5', key: Buffer.from('c'), batchContext: { producerId: '-1', inTransaction: false } },
      ],
      // The broker's order: A was aborted first although B began first.
      abortedTransactions: [
        { producerId: 'A', firstOffset: '1' },
        { producerId: 'B', firstOffset: '0' },
      ],
    }
    hideAbortedRecords(partition)
    expect(visible(partition)).toEqual(['c'])
    expect(partition.abortedTransactions).toEqual([])
  })

  it('enters every aborted transaction already begun when the fetch starts in the middle of them', () => {
    const partition: FetchedPartition = {
      messages: [record(5, 'A', 'a5'), record(6, 'B', 'b6'), marker(7, 'A', ABORT), marker(8, 'B', ABORT)],
      abortedTransactions: [
        { producerId: 'B', firstOffset: '0' },
        { producerId: 'A', firstOffset: '1' },
      ],
    }
    hideAbortedRecords(partition)
    expect(visible(partition)).toEqual([])
  })

  it("keeps a producer's committed transaction that follows its aborted one", () => {
    const partition: FetchedPartition = {
      messages: [
        record(5, 'B', 'b-aborted'),
        marker(6, 'B', ABORT),
        record(10, 'A', 'a-aborted'),
        record(12, 'B', 'b-committed'),
        marker(13, 'B', COMMIT),
        marker(14, 'A', ABORT),
      ],
      abortedTransactions: [
        { producerId: 'B', firstOffset: '5' },
        { producerId: 'A', firstOffset: '10' },
      ].reverse(),
    }
    hideAbortedRecords(partition)
    expect(visible(partition)).toEqual(['b-committed'])
  })

  it('leaves a partition without aborted transactions untouched', () => {
    const partition: FetchedPartition = { messages: [record(0, 'A', 'a0')], abortedTransactions: null }
    hideAbortedRecords(partition)
    expect(visible(partition)).toEqual(['a0'])
    expect(partition.abortedTransactions).toBeNull()
  })
})
