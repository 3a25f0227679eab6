import { describe, expect, it } from 'vitest'
import { outOfRangePartitions } from './fetch-control.ts'
import { isPlaceholderStart, outOfRangeEvent, outOfRangeMessage } from './out-of-range.ts'

/** The shape @platformatic/kafka fails a fetch with when a partition is out of range: the answer rides on the error. */
function fetchError(partitions: Array<{ partitionIndex: number; errorCode: number; logStartOffset: bigint; highWatermark: bigint }>) {
  const error = new Error('Received response with error while executing API Fetch(v17)') as Error & { errors: unknown[]; response: unknown }
  error.errors = [{ apiId: 'OFFSET_OUT_OF_RANGE', apiCode: 1 }]
  error.response = { errorCode: 0, responses: [{ topicId: 'id-raw', partitions }] }
  return error
}

const names = new Map([['id-raw', 'raw']])

describe('a fetch offset out of range', () => {
  it('is read off the failed fetch for the partitions that were out of range, with the offset each was fetched from', () => {
    const error = fetchError([
      { partitionIndex: 0, errorCode: 0, logStartOffset: 0n, highWatermark: 900n },
      { partitionIndex: 1, errorCode: 1, logStartOffset: 1_500n, highWatermark: 3_000n },
    ])
    const requested = new Map([
      ['id-raw:0', 400n],
      ['id-raw:1', 700n],
    ])
    expect(outOfRangePartitions(error, names, requested)).toEqual([
      { topic: 'raw', partition: 1, requestedOffset: 700n, logStartOffset: 1_500n, highWatermark: 3_000n },
    ])
    // A fetch issued before a seek or a rebalance is not asked about; other errors are not this one.
    expect(outOfRangePartitions(error, names, new Map([['id-raw:0', 400n]]))).toEqual([])
    expect(outOfRangePartitions(Object.assign(new Error('timeout'), { response: (error as { response: unknown }).response }), names, requested)).toEqual([])
  })

  it('counts the offsets skipped when the loop reads on from the log start, or from the end when it does not read from the beginning', () => {
    const e = { topic: 'raw', partition: 1, requestedOffset: 700n, logStartOffset: 1_500n, highWatermark: 3_000n }
    const earliest = outOfRangeEvent(e, { fallback: 'earliest', hold: false })!
    expect(earliest).toMatchObject({ removed: true, resetTo: '1500', skippedOffsets: 800, held: false })
    expect(outOfRangeMessage(earliest)).toBe(
      'raw/1: records from offset 700 were removed (retention or DeleteRecords) before they were read; the log now starts at 1500; reading on from offset 1500, 800 offset(s) skipped unread',
    )
    expect(outOfRangeEvent(e, { fallback: 'latest', hold: false })).toMatchObject({ resetTo: '3000', skippedOffsets: 2_300 })
  })

  it('skips nothing when held, and says the partition is held', () => {
    const held = outOfRangeEvent({ topic: 'raw', partition: 1, requestedOffset: 700n, logStartOffset: 1_500n, highWatermark: 3_000n }, { fallback: 'earliest', hold: true })!
    expect(held).toMatchObject({ removed: true, skippedOffsets: 0, held: true })
    expect(outOfRangeMessage(held)).toMatch(/before they were read; the log now starts at 1500; partition held, nothing more is read from it$/)
  })

  it('reads a truncated log again from its start, and says so', () => {
    const truncated = outOfRangeEvent({ topic: 'raw', partition: 0, requestedOffset: 5_000n, logStartOffset: 0n, highWatermark: 4_200n }, { fallback: 'earliest', hold: false })!
    expect(truncated).toMatchObject({ removed: false, resetTo: '0', skippedOffsets: 0 })
    expect(outOfRangeMessage(truncated)).toBe('raw/0: fetch offset 5000 is past the end of the log (4200): it was truncated; reading on from offset 0, again from an earlier offset')
  })

  it('is no gap when offset 0 stood for "the beginning" of a partition without a committed offset', () => {
    const e = { topic: 'raw', partition: 0, requestedOffset: 0n, logStartOffset: -1n, highWatermark: -1n }
    expect(isPlaceholderStart(e, true)).toBe(true)
    // A committed offset of 0 (a backfill's range start) that retention passed is one, as is any other offset.
    expect(isPlaceholderStart(e, false)).toBe(false)
    expect(isPlaceholderStart({ ...e, requestedOffset: 40n }, true)).toBe(false)
  })
})
