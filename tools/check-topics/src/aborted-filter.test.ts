import { describe, expect, it } from 'vitest'
import { committedBatches, type BatchLike } from './aborted-filter.ts'

type Rec = { key: Buffer | null; name: string }
const TX = 0x10
const CONTROL = 0x20
const data = (firstOffset: number, producerId: number, name: string, transactional = true): BatchLike<Rec> => ({
  firstOffset: BigInt(firstOffset),
  lastOffsetDelta: 0,
  attributes: transactional ? TX : 0,
  producerId: BigInt(producerId),
  records: [{ key: Buffer.from(name), name }],
})
const marker = (offset: number, producerId: number, type: 'ABORT' | 'COMMIT'): BatchLike<Rec> => {
  const key = Buffer.alloc(4)
  key.writeInt16BE(0, 0)
  key.writeInt16BE(type === 'ABORT' ? 0 : 1, 2)
  return { firstOffset: BigInt(offset), lastOffsetDelta: 0, attributes: TX | CONTROL, producerId: BigInt(producerId), records: [{ key, name: type }] }
}
const names = (batches: BatchLike<Rec>[]) => batches.flatMap((b) => b.records.map((r) => r.name))

describe('committedBatches (the Java consumer read_committed rule)', () => {
  it('drops control batches and keeps committed transactional and plain records', () => {
    expect(names(committedBatches([data(0, 1, 'a'), marker(1, 1, 'COMMIT'), data(2, 9, 'plain', false)], []))).toEqual(['a', 'plain'])
  })

  it('drops the records of an aborted transaction up to its ABORT marker, not the same producer after it', () => {
    const batches = [data(0, 1, 'x'), data(1, 1, 'y'), marker(2, 1, 'ABORT'), data(3, 1, 'z'), marker(4, 1, 'COMMIT')]
    expect(names(committedBatches(batches, [{ producerId: 1n, firstOffset: 0n }]))).toEqual(['z'])
  })

  it('handles aborted transactions of two producers interleaved and listed out of offset order', () => {
    const batches = [
      data(0, 1, 'p1-aborted'),
      data(1, 2, 'p2-committed'),
      data(2, 3, 'p3-aborted'),
      marker(3, 2, 'COMMIT'),
      data(4, 1, 'p1-aborted-2'),
      marker(5, 3, 'ABORT'),
      marker(6, 1, 'ABORT'),
      data(7, 3, 'p3-committed'),
      marker(8, 3, 'COMMIT'),
    ]
    // Listed in the order they were aborted (p3 first), as the broker does.
    const aborted = [
      { producerId: 3n, firstOffset: 2n },
      { producerId: 1n, firstOffset: 0n },
    ]
    expect(names(committedBatches(batches, aborted))).toEqual(['p2-committed', 'p3-committed'])
  })

  it('does not drop non-transactional records of a producer id that is aborting', () => {
    expect(names(committedBatches([data(0, 1, 'tx'), data(1, 1, 'plain', false), marker(2, 1, 'ABORT')], [{ producerId: 1n, firstOffset: 0n }]))).toEqual(['plain'])
  })
})
