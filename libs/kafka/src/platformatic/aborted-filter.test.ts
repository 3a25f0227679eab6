import type { RecordsBatch } from '@platformatic/kafka'
import { describe, expect, it } from 'vitest'
import { hideAbortedBatches } from './aborted-filter.ts'

const TRANSACTIONAL = 1 << 4
const CONTROL = 1 << 5

function data(producerId: bigint, offset: number, value: string): RecordsBatch {
  return {
    firstOffset: BigInt(offset),
    lastOffsetDelta: 0,
    producerId,
    attributes: TRANSACTIONAL,
    records: [{ value: Buffer.from(value) }],
  } as unknown as RecordsBatch
}

function marker(producerId: bigint, offset: number, type: 0 | 1): RecordsBatch {
  const key = Buffer.alloc(4)
  key.writeInt16BE(type, 2)
  return {
    firstOffset: BigInt(offset),
    lastOffsetDelta: 0,
    producerId,
    attributes: TRANSACTIONAL | CONTROL,
    records: [{ key }],
  } as unknown as RecordsBatch
}

const values = (batches: RecordsBatch[]) =>
  batches.flatMap((b) => ((b.attributes & CONTROL) !== 0 ? [] : b.records.map((r) => String(r.value))))

describe('hideAbortedBatches', () => {
  it('hides every aborted transaction of one producer, not only its last', () => {
    const batches = [
      data(1n, 0, 'a1 aborted'),
      marker(1n, 1, 0),
      data(1n, 2, 'a2 committed'),
      marker(1n, 3, 1),
      data(1n, 4, 'a3 aborted'),
      marker(1n, 5, 0),
    ]
    const aborted = [
      { producerId: 1n, firstOffset: 0n },
      { producerId: 1n, firstOffset: 4n },
    ]
    expect(values(hideAbortedBatches(batches, aborted))).toEqual(['a2 committed'])
  })

  it('hides interleaved aborted transactions of two producers and keeps what follows', () => {
    const batches = [
      data(2n, 0, 'b0 aborted'),
      data(1n, 1, 'a0 aborted'),
      marker(1n, 2, 0),
      data(2n, 3, 'b1 aborted'),
      marker(2n, 4, 0),
      data(2n, 5, 'b2 committed'),
      marker(2n, 6, 1),
    ]
    const aborted = [
      { producerId: 1n, firstOffset: 1n },
      { producerId: 2n, firstOffset: 0n },
    ]
    expect(values(hideAbortedBatches(batches, aborted))).toEqual(['b2 committed'])
  })

  it('keeps batches (emptied) so the position still moves past them', () => {
    const out = hideAbortedBatches([data(1n, 0, 'x'), marker(1n, 1, 0)], [{ producerId: 1n, firstOffset: 0n }])
    expect(out.map((b) => b.firstOffset)).toEqual([0n, 1n])
    expect(out[0]!.records).toEqual([])
  })
})
