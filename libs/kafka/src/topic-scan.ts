import type { Kafka } from './kafka-client.ts'
import { TopicScanTimeoutError } from './errors.ts'
import { TopicReader } from './platformatic/topic-reader.ts'

/** One record of a scan (the shape KafkaJS callers know: offsets and timestamps as strings). */
export interface ScannedMessage {
  key: Buffer | null
  value: Buffer | null
  offset: string
  /** Milliseconds since the epoch. */
  timestamp: string
  headers: Record<string, Buffer>
}

export interface TopicScanOptions {
  /** A client made by createKafka. */
  kafka: Kafka
  topic: string
  /** Start at the first record written at or after this moment; default: the beginning. */
  from?: Date
  /** Called for every record of the scan, in offset order per partition; a throw ends the scan with that error. */
  onMessage: (message: ScannedMessage, partition: number) => void | Promise<void>
  /** Give up after this long (`TopicScanTimeoutError`, retriable); default 10 minutes. */
  timeoutMs?: number
  /** Ends the scan early (the caller is stopping): resolves with what was read so far. */
  signal?: AbortSignal
}

/**
 * Reads `topic` once, read committed, from `from` to the end offsets it has
 * when the scan starts (records written during the scan are not included, so
 * a scan that republishes never reads its own output). The end offsets are the
 * last stable offsets: a transaction still open at the start neither holds the
 * scan back nor is part of it. Runs on TopicReader (@platformatic/kafka, no
 * consumer group).
 */
export interface TopicScanResult {
  records: number
  /**
   * With `from`: partitions where the window may reach before what the log still holds
   * (TopicReader.cutByRetention), so records of it may be gone. Empty without `from`.
   */
  cutByRetention: Array<{ partition: number; logStart: string }>
}

export async function scanTopic(options: TopicScanOptions): Promise<TopicScanResult> {
  const { topic } = options
  let records = 0
  const reader = new TopicReader({
    kafka: options.kafka,
    topics: [topic],
    ...(options.from === undefined ? {} : { from: options.from }),
    onRecords: async (batch) => {
      for (const r of batch.records) {
        if (options.signal?.aborted) return
        records += 1
        const headers: Record<string, Buffer> = {}
        for (const [k, v] of r.headers) if (k !== null && v !== null) headers[k.toString('utf8')] = v
        await options.onMessage(
          { key: r.key, value: r.value, offset: r.offset.toString(), timestamp: r.timestamp.toString(), headers },
          batch.partition,
        )
      }
    },
  })
  const timeoutMs = options.timeoutMs ?? 600_000
  let timer: NodeJS.Timeout | undefined
  let expired = false
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      expired = true
      const left = partitionsLeft(reader)
      reject(
        new TopicScanTimeoutError(
          `scanning ${topic} did not reach its end offsets within ${timeoutMs} ms (partitions left: ${left.join(', ')})`,
          { topic, timeoutMs, partitionsLeft: left },
        ),
      )
    }, timeoutMs)
  })
  let onAbort: (() => void) | undefined
  const aborted = new Promise<void>((resolve) => {
    onAbort = () => resolve()
    if (options.signal?.aborted) resolve()
    else options.signal?.addEventListener('abort', onAbort, { once: true })
  })
  try {
    await Promise.race([
      (async () => {
        await reader.start()
        await reader.done()
      })(),
      timedOut,
      aborted,
    ])
  } finally {
    clearTimeout(timer)
    if (onAbort !== undefined) options.signal?.removeEventListener('abort', onAbort)
    // After a timeout the caller's onMessage may still be running (it may be what
    // is stuck): the reader closes once it returns, without holding up the error.
    if (expired) void reader.stop()
    else await reader.stop()
  }
  return { records, cutByRetention: reader.cutByRetention().map((c) => ({ partition: c.partition, logStart: c.logStart.toString() })) }
}

function partitionsLeft(reader: TopicReader): number[] {
  return [...reader.unfinished()].map((key) => Number(key.slice(key.lastIndexOf(':') + 1)))
}
