import type { OffsetOutOfRangeEvent, OffsetReader, PartitionOffsets } from '@tep/kafka'
import type { BackfillInput } from './backfill-input.ts'
import type { BackfillState, PartitionRange } from './backfill-topics.ts'
import { RetentionGapError, type RetentionGap } from './errors.ts'

/**
 * Partitions where retention removed records of the range that the backfill has not read yet.
 *
 * The check of a new range (`retentionGaps` in topic-range.ts) runs once, when the range is
 * computed; a killed backfill resumed days later trusts its stored ranges, and its consumer,
 * whose committed position is then below the log start, is moved to the log start by the client
 * (out of range → earliest) without a word. The ledger only counts what was read, so the rows
 * removed in between would vanish and the run would report itself complete.
 *
 * Per partition, the next read position is the group's committed offset, or the range start
 * when the group committed nothing there. Records were removed unread when the log now starts
 * after that position while it is still inside the range (next < end): the offsets from `next`
 * to the log start, or to the range end if the log starts past it (then every remaining record
 * of the partition is gone, the worst case, not a finished partition). A log start at or below
 * the next position only removed records that were already read: not a gap.
 */
export function unreadGaps(
  ranges: PartitionRange[],
  offsets: PartitionOffsets[],
  committed: ReadonlyMap<number, bigint>,
): RetentionGap[] {
  const gaps: RetentionGap[] = []
  for (const r of ranges) {
    const low = offsets.find((o) => o.partition === r.partition)?.low
    const gap = low === undefined ? undefined : gapAt(r, committed.get(r.partition) ?? BigInt(r.start), low)
    if (gap !== undefined) gaps.push(gap)
  }
  return gaps
}

/**
 * The records of range `r` removed unread when the backfill reads on from `next` and the log
 * starts at `low`: from `next` to the log start, or to the range end if the log starts past it.
 * None when `next` is past the range or the log start is at or below it.
 */
function gapAt(r: PartitionRange, next: bigint, low: bigint): RetentionGap | undefined {
  const end = BigInt(r.end)
  if (next >= end || low <= next) return undefined
  const skippedTo = low < end ? low : end
  return { partition: r.partition, logStart: String(low), nextOffset: String(next), skippedOffsets: Number(skippedTo - next) }
}

/**
 * The gap a running backfill met when its consumer asked for an offset retention had removed
 * (the pipeline's onOffsetOutOfRange): from the requested offset to the log start, or to the
 * range end if the log starts past it. Undefined when nothing of the range was removed: the
 * partition is not in the range, its fetch was already past the range end, or the log was
 * truncated rather than trimmed (nothing removed below the fetch offset).
 */
export function overtakenGap(ranges: PartitionRange[], e: OffsetOutOfRangeEvent): RetentionGap | undefined {
  const r = ranges.find((x) => x.partition === e.partition)
  if (r === undefined || !e.removed) return undefined
  return gapAt(r, BigInt(e.requestedOffset), BigInt(e.logStartOffset))
}

/**
 * Gaps found before a run reads (fresh or resumed), added to those already accepted: a gap
 * recorded by an earlier accepted run whose consumer has since moved past it cannot be seen again
 * from the offsets, so the state keeps it for the final report. The same partition and next
 * position found again (a run killed before it committed past the gap) replaces the older entry.
 */
export function mergeGaps(known: RetentionGap[], found: RetentionGap[]): RetentionGap[] {
  const same = (a: RetentionGap, b: RetentionGap): boolean => a.partition === b.partition && a.nextOffset === b.nextOffset
  return [...known.filter((k) => !found.some((f) => same(k, f))), ...found]
}

/**
 * Checks a topic backfill's stored ranges before it reads on, and returns its state with the
 * gaps found added (the same object when there are none). Throws RetentionGapError when there
 * are some and the input does not accept them (`--accept-retention-gap`).
 *
 * The committed offsets are read without waiting for a killed run's open transaction: a commit
 * still pending can only move the position forward, so a gap is at worst reported that the
 * pending commit would have closed (a refusal one can answer with the flag), never missed.
 */
export async function withUnreadGaps(
  reader: OffsetReader,
  input: Extract<BackfillInput, { kind: 'topic' }>,
  groupId: string,
  state: BackfillState,
): Promise<BackfillState> {
  const offsets = await reader.topicOffsets(input.topic, { readCommitted: true })
  const committed = await reader.committedOffsets(groupId, input.topic)
  const gaps = unreadGaps(state.ranges ?? [], offsets, committed)
  if (gaps.length === 0) return state
  if (input.acceptRetentionGap !== true) throw new RetentionGapError(input.topic, gaps)
  return { ...state, retentionGaps: mergeGaps(state.retentionGaps ?? [], gaps) }
}
