import type { OffsetReader } from '@tep/kafka'
import { describe, expect, it } from 'vitest'
import type { BackfillState } from './backfill-topics.ts'
import { RetentionGapError } from './errors.ts'
import { mergeGaps, overtakenGap, unreadGaps, withUnreadGaps } from './unread-gaps.ts'

const log = (partition: number, low: bigint, high: bigint) => ({ partition, low, high })
const range = (partition: number, start: number, end: number) => ({ partition, start: String(start), end: String(end) })

describe('unreadGaps', () => {
  it('names a partition whose log now starts after where the backfill reads next, inside the range', () => {
    // Committed at 120, the log trimmed to 300, the range ends at 1000: offsets 120-299 were never read.
    expect(unreadGaps([range(0, 0, 1000)], [log(0, 300n, 1000n)], new Map([[0, 120n]]))).toEqual([
      { partition: 0, logStart: '300', nextOffset: '120', skippedOffsets: 180 },
    ])
  })

  it('leaves alone a trim that only removed records already read (log start at or below the committed position)', () => {
    const ranges = [range(0, 0, 1000), range(1, 0, 1000)]
    const offsets = [log(0, 120n, 1000n), log(1, 80n, 1000n)]
    expect(unreadGaps(ranges, offsets, new Map([[0, 120n], [1, 500n]]))).toEqual([])
  })

  it('names a partition whose whole unread rest is gone (log start past the range end), counting only the range', () => {
    expect(unreadGaps([range(0, 0, 1000)], [log(0, 1500n, 1600n)], new Map([[0, 400n]]))).toEqual([
      { partition: 0, logStart: '1500', nextOffset: '400', skippedOffsets: 600 },
    ])
  })

  it('leaves alone a partition already read to its range end, however far the log was trimmed', () => {
    expect(unreadGaps([range(0, 0, 1000)], [log(0, 1500n, 1600n)], new Map([[0, 1000n]]))).toEqual([])
    expect(unreadGaps([range(0, 10, 10)], [log(0, 50n, 60n)], new Map())).toEqual([])
  })

  it('reads on from the stored range start where the group committed nothing', () => {
    const ranges = [range(0, 200, 900), range(1, 200, 900)]
    const offsets = [log(0, 250n, 900n), log(1, 200n, 900n)]
    expect(unreadGaps(ranges, offsets, new Map())).toEqual([{ partition: 0, logStart: '250', nextOffset: '200', skippedOffsets: 50 }])
  })
})

describe('mergeGaps', () => {
  it('keeps earlier gaps and replaces one found again at the same partition and position', () => {
    const start = { partition: 1, logStart: '4' }
    const old = { partition: 0, logStart: '300', nextOffset: '120', skippedOffsets: 180 }
    const again = { partition: 0, logStart: '350', nextOffset: '120', skippedOffsets: 230 }
    expect(mergeGaps([start, old], [again])).toEqual([start, again])
  })
})

describe('withUnreadGaps', () => {
  const state: BackfillState = {
    backfillId: 'b',
    kind: 'topic',
    source: 'raw@a..b',
    sha256: 'x',
    loadedThroughLine: 0,
    loadedRows: 1000,
    loadComplete: true,
    ranges: [range(0, 0, 1000)],
    startedAt: 0,
    finishedAt: null,
  }
  const reader = (low: bigint, committed: bigint): OffsetReader =>
    ({
      topicOffsets: () => Promise.resolve([log(0, low, 1000n)]),
      committedOffsets: () => Promise.resolve(new Map([[0, committed]])),
    }) as unknown as OffsetReader
  const input = (accept: boolean) => ({
    kind: 'topic' as const,
    topic: 'raw',
    from: new Date(0),
    to: new Date(1),
    ...(accept ? { acceptRetentionGap: true } : {}),
  })

  it('refuses an unread gap with BACKFILL_RETENTION_GAP, naming the partition, the next position and the log start', async () => {
    const refusal = withUnreadGaps(reader(300n, 120n), input(false), 'g', state)
    await expect(refusal).rejects.toBeInstanceOf(RetentionGapError)
    await expect(refusal).rejects.toMatchObject({
      code: 'BACKFILL_RETENTION_GAP',
      gaps: [{ partition: 0, logStart: '300', nextOffset: '120', skippedOffsets: 180 }],
      message: expect.stringContaining("partition 0's 180 offset(s) from 120 (the backfill was to read on from 120; the log now starts at 300)"),
    })
  })

  it('with --accept-retention-gap returns the state with the gap added', async () => {
    expect((await withUnreadGaps(reader(300n, 120n), input(true), 'g', state)).retentionGaps).toEqual([
      { partition: 0, logStart: '300', nextOffset: '120', skippedOffsets: 180 },
    ])
  })

  it('returns the same state when nothing unread was removed', async () => {
    expect(await withUnreadGaps(reader(100n, 120n), input(false), 'g', state)).toBe(state)
  })
})

describe('overtakenGap (retention overtaking a running backfill)', () => {
  const ranges = [range(0, 100, 1_000), range(1, 0, 50)]
  const event = (partition: number, requested: number, logStart: number, removed = true) => ({
    topic: 'raw',
    partition,
    requestedOffset: String(requested),
    logStartOffset: String(logStart),
    highWatermark: '2000',
    removed,
    resetTo: String(logStart),
    skippedOffsets: 0,
    held: true,
  })

  it('runs from the offset the consumer asked for to the log start, or to the range end when the log starts past it', () => {
    expect(overtakenGap(ranges, event(0, 400, 700))).toEqual({ partition: 0, logStart: '700', nextOffset: '400', skippedOffsets: 300 })
    expect(overtakenGap(ranges, event(0, 400, 1_500))).toEqual({ partition: 0, logStart: '1500', nextOffset: '400', skippedOffsets: 600 })
  })

  it('is none past the range end, outside the ranges, or for a truncated log (nothing removed)', () => {
    expect(overtakenGap(ranges, event(1, 60, 90))).toBeUndefined()
    expect(overtakenGap(ranges, event(2, 10, 90))).toBeUndefined()
    expect(overtakenGap(ranges, event(0, 400, 0, false))).toBeUndefined()
  })
})
