import { describe, expect, it } from 'vitest'
import { rangesOf, retentionGaps } from './topic-range.ts'

const log = (partition: number, low: bigint, high: bigint) => ({ partition, low, high })

describe('rangesOf', () => {
  it('takes the offsets found by time, and the log end where the broker found none (-1)', () => {
    const offsets = [log(0, 0n, 40n), log(1, 0n, 30n)]
    expect(rangesOf(offsets, new Map([[0, 10n], [1, -1n]]), new Map([[0, 25n], [1, -1n]]))).toEqual([
      { partition: 0, start: '10', end: '25' },
      { partition: 1, start: '30', end: '30' },
    ])
  })
})

describe('retentionGaps', () => {
  it('names a partition whose range starts at a log start above 0 (its removed records may have been in the range)', () => {
    const offsets = [log(0, 4n, 10n), log(1, 0n, 10n), log(2, 4n, 10n)]
    const ranges = [
      { partition: 0, start: '4', end: '10' },
      { partition: 1, start: '0', end: '10' },
      { partition: 2, start: '5', end: '10' },
    ]
    expect(retentionGaps(offsets, ranges)).toEqual([{ partition: 0, logStart: '4' }])
  })

  it('names a partition whose records were all removed (an old range that would read 0 rows)', () => {
    const offsets = [log(0, 35n, 35n)]
    expect(retentionGaps(offsets, rangesOf(offsets, new Map([[0, -1n]]), new Map([[0, -1n]])))).toEqual([
      { partition: 0, logStart: '35' },
    ])
  })

  it('leaves alone a partition never trimmed, and one whose range starts after its oldest record', () => {
    const offsets = [log(0, 0n, 0n), log(1, 7n, 20n)]
    expect(retentionGaps(offsets, [{ partition: 0, start: '0', end: '0' }, { partition: 1, start: '8', end: '20' }])).toEqual([])
  })
})
