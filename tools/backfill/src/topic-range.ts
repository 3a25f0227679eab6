import type { OffsetReader, PartitionOffsets } from '@tep/kafka'
import type { BackfillInput } from './backfill-input.ts'
import type { BackfillState, PartitionRange } from './backfill-topics.ts'
import { RetentionGapError, type RetentionGap } from './errors.ts'

/**
 * The range's offsets per partition, from the first record at or after each moment
 * (ListOffsets by timestamp). The broker answers -1 where no record is that late:
 * the range then starts (or ends) at the log's end.
 */
export function rangesOf(offsets: PartitionOffsets[], fromOffsets: Map<number, bigint>, toOffsets: Map<number, bigint>): PartitionRange[] {
  const at = (found: Map<number, bigint>, p: PartitionOffsets): string => {
    const o = found.get(p.partition)
    return String(o === undefined || o < 0n ? p.high : o)
  }
  return offsets.map((p) => ({ partition: p.partition, start: at(fromOffsets, p), end: at(toOffsets, p) }))
}

/**
 * Partitions where the range may have started among records retention removed.
 *
 * When the first record at or after `from` is the oldest record left (start equals
 * the log start) and the log no longer starts at 0, the removed record just before
 * it could have been inside the range too: nothing left says when it was written.
 * An old range whose records are all gone looks the same (start = log start = end),
 * and would otherwise "complete" with 0 rows.
 */
export function retentionGaps(offsets: PartitionOffsets[], ranges: PartitionRange[]): RetentionGap[] {
  const gaps: RetentionGap[] = []
  for (const p of offsets) {
    const r = ranges.find((x) => x.partition === p.partition)
    if (r !== undefined && p.low > 0n && BigInt(r.start) <= p.low) gaps.push({ partition: p.partition, logStart: String(p.low) })
  }
  return gaps
}

/**
 * The range's offsets per partition and its retention gaps. Throws RetentionGapError
 * when the range may start before the log does, unless the input accepts that
 * (`--accept-retention-gap`). A dry run checks a range with this as a run does.
 */
export async function checkedRange(
  reader: OffsetReader,
  input: Extract<BackfillInput, { kind: 'topic' }>,
  offsets: PartitionOffsets[],
): Promise<{ ranges: PartitionRange[]; gaps: RetentionGap[] }> {
  const fromOffsets = await reader.offsetsAt(input.topic, input.from.getTime())
  const toOffsets = await reader.offsetsAt(input.topic, input.to.getTime())
  const ranges = rangesOf(offsets, fromOffsets, toOffsets)
  const gaps = retentionGaps(offsets, ranges)
  if (gaps.length > 0 && input.acceptRetentionGap !== true) throw new RetentionGapError(input.topic, gaps)
  return { ranges, gaps }
}

/** The state of a new topic backfill: its checked range, how many records it holds, and any accepted gaps. */
export async function topicRangeState(
  reader: OffsetReader,
  input: Extract<BackfillInput, { kind: 'topic' }>,
  backfillId: string,
  identity: { sha256: string; source: string },
  offsets: PartitionOffsets[],
): Promise<BackfillState> {
  const { ranges, gaps } = await checkedRange(reader, input, offsets)
  const estimate = ranges.reduce((n, r) => n + Math.max(0, Number(BigInt(r.end) - BigInt(r.start))), 0)
  return {
    backfillId,
    kind: 'topic',
    source: identity.source,
    sha256: identity.sha256,
    loadedThroughLine: 0,
    loadedRows: estimate,
    loadComplete: true,
    ranges,
    ...(gaps.length > 0 ? { retentionGaps: gaps } : {}),
    startedAt: Date.now(),
    finishedAt: null,
  }
}
