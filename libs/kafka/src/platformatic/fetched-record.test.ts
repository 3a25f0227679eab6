import type { RecordsBatch } from '@platformatic/kafka'
import { describe, expect, it } from 'vitest'
import { FetchedRecord, fetchedRecords } from './fetched-record.ts'

function batch(records: Array<{ offsetDelta: number; timestampDelta: bigint }>, firstOffset = 9_007_199_254_740_000n, attributes = 0): RecordsBatch {
  return {
    firstOffset,
    attributes,
    firstTimestamp: 1_795_000_000_000n,
    maxTimestamp: 1_795_000_009_999n,
    lastOffsetDelta: records.length - 1,
    records: records.map((r) => ({ ...r, length: 0, attributes: 0, key: Buffer.from('k'), value: null, headers: [[Buffer.from('h'), null]] })),
  } as unknown as RecordsBatch
}

describe('FetchedRecord', () => {
  it("reads its offset and timestamp from its batch (CreateTime, or the batch's LogAppendTime), beyond 2^53 exactly", () => {
    const b = batch([
      { offsetDelta: 0, timestampDelta: 0n },
      { offsetDelta: 7, timestampDelta: 42n },
    ])
    const created = new FetchedRecord(b, b.records[1]!, false)
    expect(created.offset).toBe(9_007_199_254_740_007n)
    expect(created.timestamp).toBe(1_795_000_000_042n)
    expect(created.key?.toString()).toBe('k')
    expect(created.value).toBeNull()
    expect(created.headers).toEqual([[Buffer.from('h'), null]])
    expect(new FetchedRecord(b, b.records[1]!, true).timestamp).toBe(1_795_000_009_999n)
  })

  it('is a plain record as JSON and in comparisons of its fields', () => {
    const b = batch([{ offsetDelta: 3, timestampDelta: 5n }])
    const r = new FetchedRecord(b, b.records[0]!, false)
    expect(r.toJSON()).toEqual({ offset: 9_007_199_254_740_003n, timestamp: 1_795_000_000_005n, key: Buffer.from('k'), value: null, headers: [[Buffer.from('h'), null]] })
  })
})

describe('fetchedRecords', () => {
  const deltas = (n: number) => Array.from({ length: n }, (_, i) => ({ offsetDelta: i, timestampDelta: BigInt(i) }))
  const offsets = (records: Array<{ offset: bigint }>) => records.map((r) => Number(r.offset))

  it('takes the data records from the position on and before the end of a bounded read, across batches that straddle either', () => {
    const batches = [batch(deltas(5), 10n), batch(deltas(1), 15n, 0x20), batch(deltas(5), 16n)]
    expect(offsets(fetchedRecords(batches, 10n, undefined))).toEqual([10, 11, 12, 13, 14, 16, 17, 18, 19, 20])
    expect(offsets(fetchedRecords(batches, 12n, 19n))).toEqual([12, 13, 14, 16, 17, 18])
    expect(offsets(fetchedRecords(batches, 16n, 21n))).toEqual([16, 17, 18, 19, 20])
    expect(fetchedRecords(batches, 21n, undefined)).toEqual([])
  })
})
