import type { OffsetOutOfRangeEvent } from '@tep/kafka'
import { describe, expect, it, vi } from 'vitest'
import type { BackfillInput } from './backfill-input.ts'
import type { BackfillState } from './backfill-topics.ts'
import { BackfillRefusedError, RetentionGapError } from './errors.ts'
import { OvertakenGaps } from './overtaken-gaps.ts'

const topic = (accept: boolean): BackfillInput => ({ kind: 'topic', topic: 'raw', from: new Date(0), to: new Date(1), ...(accept ? { acceptRetentionGap: true } : {}) })
const state: BackfillState = {
  backfillId: 'b1',
  kind: 'topic',
  source: 'raw@..',
  sha256: 'x',
  loadedThroughLine: 0,
  loadedRows: 0,
  loadComplete: true,
  startedAt: 0,
  finishedAt: null,
  ranges: [{ partition: 0, start: '100', end: '1000' }],
}
const event = (over: Partial<OffsetOutOfRangeEvent>): OffsetOutOfRangeEvent => ({
  topic: 'raw',
  partition: 0,
  requestedOffset: '400',
  logStartOffset: '700',
  highWatermark: '2000',
  removed: true,
  resetTo: '700',
  skippedOffsets: 0,
  held: true,
  ...over,
})

function watch(input: BackfillInput) {
  let current = state
  const run = {
    backfillId: 'b1',
    state: () => current,
    replaceState: (s: BackfillState) => void (current = s),
    storeState: vi.fn(async (_s: BackfillState) => {}),
    stop: vi.fn(),
  }
  return { gaps: new OvertakenGaps(input, run), run }
}

describe('OvertakenGaps (retention overtaking a running backfill)', () => {
  it('holds without --accept-retention-gap: stops the run, which then ends refused with the gap', async () => {
    const { gaps, run } = watch(topic(false))
    expect(gaps.policy).toBe('hold')
    gaps.onOffsetOutOfRange(event({}))
    expect(run.stop).toHaveBeenCalledTimes(1)
    const refusal = gaps.settle()
    await expect(refusal).rejects.toBeInstanceOf(RetentionGapError)
    await expect(refusal).rejects.toMatchObject({ gaps: [{ partition: 0, logStart: '700', nextOffset: '400', skippedOffsets: 300 }] })
    expect(run.storeState).not.toHaveBeenCalled()
  })

  it('with --accept-retention-gap reads on: stores the gap in the state and does not stop', async () => {
    const { gaps, run } = watch(topic(true))
    expect(gaps.policy).toBe('reset')
    gaps.onOffsetOutOfRange(event({ held: false, skippedOffsets: 300 }))
    await gaps.settle()
    expect(run.stop).not.toHaveBeenCalled()
    expect(run.storeState).toHaveBeenCalledWith({ ...state, retentionGaps: [{ partition: 0, logStart: '700', nextOffset: '400', skippedOffsets: 300 }] })
  })

  it('keeps every accepted gap when a second one comes before the first is stored', async () => {
    const { gaps, run } = watch(topic(true))
    gaps.onOffsetOutOfRange(event({ held: false }))
    gaps.onOffsetOutOfRange(event({ held: false, requestedOffset: '800', logStartOffset: '900' }))
    await gaps.settle()
    expect(run.storeState).toHaveBeenLastCalledWith({
      ...state,
      retentionGaps: [
        { partition: 0, logStart: '700', nextOffset: '400', skippedOffsets: 300 },
        { partition: 0, logStart: '900', nextOffset: '800', skippedOffsets: 100 },
      ],
    })
  })

  it('ignores a fetch already past the range end', async () => {
    const { gaps, run } = watch(topic(false))
    gaps.onOffsetOutOfRange(event({ requestedOffset: '1200', logStartOffset: '1500' }))
    await gaps.settle()
    expect(run.stop).not.toHaveBeenCalled()
  })

  it.each([
    ['a truncated log', event({ requestedOffset: '900', logStartOffset: '0', highWatermark: '800', removed: false }), /log was truncated to 800/],
    ['log offsets the cluster did not give', event({ logStartOffset: '-1', highWatermark: '-1', removed: false }), /its log offsets could not be read/],
  ])('ends refused on %s', async (_what, e, message) => {
    const { gaps, run } = watch(topic(false))
    gaps.onOffsetOutOfRange(e)
    expect(run.stop).toHaveBeenCalled()
    await expect(gaps.settle()).rejects.toThrow(message)
  })

  it("ends a file backfill refused when its rows topic lost staged rows", async () => {
    const { gaps } = watch({ kind: 'file', path: 'rows.csv' })
    expect(gaps.policy).toBe('hold')
    gaps.onOffsetOutOfRange(event({ topic: 'backfill-b1.rows' }))
    const refusal = gaps.settle()
    await expect(refusal).rejects.toBeInstanceOf(BackfillRefusedError)
    await expect(refusal).rejects.toThrow(/rows topic backfill-b1.rows lost staged rows/)
  })
})
