import type { Consumer } from '@platformatic/kafka'
import type { KafkaLogger } from '../logger.ts'
import type { OffsetOutOfRangeEvent } from '../pipeline-types.ts'
import type { FetchOutOfRange } from './fetch-control.ts'

const EARLIEST = -2n
const LATEST = -1n
/** ListOffsets attempts for the log's offsets before the report goes out without them. */
const ATTEMPTS = 5

/**
 * `e` with the partition's log start and end filled in. Kafka answers an out-of-range fetch
 * with -1 for both, so they are asked for (ListOffsets, as the client does to recover), again
 * for a while if the cluster does not answer; still -1 if it never does or the loop stops.
 */
export async function withLogOffsets(
  e: FetchOutOfRange,
  consumer: () => Consumer<Buffer, Buffer, Buffer, Buffer> | undefined,
  signal: AbortSignal,
  logger: KafkaLogger,
): Promise<FetchOutOfRange> {
  let known = e
  for (let attempt = 1; (known.logStartOffset < 0n || known.highWatermark < 0n) && attempt <= ATTEMPTS; attempt++) {
    const c = consumer()
    if (c === undefined || signal.aborted) break
    const ask = (timestamp: bigint) => c.listOffsets({ topics: [e.topic], partitions: { [e.topic]: [e.partition] }, timestamp })
    try {
      const [lows, highs] = await Promise.all([ask(EARLIEST), ask(LATEST)])
      known = { ...e, logStartOffset: lows.get(e.topic)?.[e.partition] ?? -1n, highWatermark: highs.get(e.topic)?.[e.partition] ?? -1n }
    } catch (err) {
      logger.warn({ err, topic: e.topic, partition: e.partition, attempt }, 'reading the log offsets of a partition out of range failed')
      await new Promise((r) => setTimeout(r, 1_000).unref())
    }
  }
  return known
}

/**
 * What a fetch offset out of range means for the loop, as the event its hook and log get.
 *
 * The client moves the fetch to the log start (`earliest`, the loop's fallback when it reads
 * from the beginning) or to the log end (`latest`). Below the log start, the records from the
 * requested offset to there were removed before they were read (retention, DeleteRecords):
 * with `earliest` those are skipped, with `latest` everything up to the end is. Past the log
 * end (a log truncated after an unclean leader election) `earliest` reads the whole log again.
 *
 * `e` must carry the log's offsets: Kafka answers an out-of-range fetch with -1 for both, so
 * the loop asks for them first (ListOffsets, as the client does to recover).
 */
export function outOfRangeEvent(
  e: FetchOutOfRange,
  options: { fallback: 'earliest' | 'latest'; hold: boolean },
): OffsetOutOfRangeEvent {
  const resetTo = options.fallback === 'earliest' ? e.logStartOffset : e.highWatermark
  const skipped = resetTo > e.requestedOffset ? Number(resetTo - e.requestedOffset) : 0
  return {
    topic: e.topic,
    partition: e.partition,
    requestedOffset: String(e.requestedOffset),
    logStartOffset: String(e.logStartOffset),
    highWatermark: String(e.highWatermark),
    removed: e.requestedOffset < e.logStartOffset,
    resetTo: String(resetTo),
    skippedOffsets: options.hold ? 0 : skipped,
    held: options.hold,
  }
}

/**
 * True when a fetch from offset 0 stood for "the beginning" of a partition without a committed
 * offset (`placeholder`): the log starting later is then what was asked for, not a gap.
 */
export function isPlaceholderStart(e: FetchOutOfRange, placeholder: boolean): boolean {
  return placeholder && e.requestedOffset === 0n
}

/** The log line of an OffsetOutOfRangeEvent: says what was lost or read again, and what the loop does. */
export function outOfRangeMessage(e: OffsetOutOfRangeEvent): string {
  const what =
    e.logStartOffset === '-1'
      ? `fetch offset ${e.requestedOffset} is out of range (the log's offsets could not be read)`
      : e.removed
        ? `records from offset ${e.requestedOffset} were removed (retention or DeleteRecords) before they were read; the log now starts at ${e.logStartOffset}`
        : `fetch offset ${e.requestedOffset} is past the end of the log (${e.highWatermark}): it was truncated`
  if (e.held) return `${e.topic}/${e.partition}: ${what}; partition held, nothing more is read from it`
  return (
    `${e.topic}/${e.partition}: ${what}; reading on from offset ${e.resetTo}` +
    (e.skippedOffsets > 0
      ? `, ${e.skippedOffsets} offset(s) skipped unread`
      : ', again from an earlier offset')
  )
}
