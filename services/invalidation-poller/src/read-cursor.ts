import { scanTopic, type TopicCodec, type Kafka } from '@tep/kafka'
import type { InvalidationCursor } from '@tep/schemas'
import type { StoredCursor } from './cursor.ts'

export interface ReadCursorOptions {
  kafka: Kafka
  topic: string
  feed: string
  codec: TopicCodec<InvalidationCursor>
  /** Give up (`TopicScanTimeoutError`, retriable) after this long; default 60 s. */
  timeoutMs?: number
}

/**
 * Reads the compacted cursor topic to its end, read committed, and returns the
 * last cursor written under `feed`.
 *
 * "End" is the last stable offset when the read starts. Call it only after the
 * poller's transactional producer is initialised: that fences any previous
 * instance and aborts its open transaction, so no cursor of an older instance
 * can still be committed after it was read.
 */
export async function readCursor(options: ReadCursorOptions): Promise<StoredCursor | undefined> {
  const { kafka, topic, feed, codec } = options
  let latest: InvalidationCursor | undefined
  await scanTopic({
    kafka,
    topic,
    timeoutMs: options.timeoutMs ?? 60_000,
    onMessage: async (message) => {
      if (message.key?.toString('utf8') !== feed || message.value === null) return
      latest = await codec.decode(message.value)
    },
  })
  return latest === undefined
    ? undefined
    : {
        feed: latest.feed,
        lastItemId: latest.lastItemId,
        feedCurrentTime: latest.feedCurrentTime,
        updatedAt: latest.updatedAt,
      }
}
