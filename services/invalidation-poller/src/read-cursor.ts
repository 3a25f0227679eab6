import { randomBytes } from 'node:crypto'
import type { TopicCodec } from '@tep/kafka'
import type { InvalidationCursor } from '@tep/schemas'
import type { Kafka } from 'kafkajs'
import type { StoredCursor } from './cursor.ts'

export interface ReadCursorOptions {
  kafka: Kafka
  topic: string
  feed: string
  codec: TopicCodec<InvalidationCursor>
  /** Give up (retriable) after this long; default 60 s. */
  timeoutMs?: number
}

/**
 * Reads the compacted cursor topic to its end, read committed, and returns the
 * last cursor written under `feed`.
 *
 * "End" is the high watermark when the read starts. Call it only after the
 * poller's transactional producer is initialised: that fences any previous
 * instance and aborts its open transaction, so nothing uncommitted can hold the
 * end back and no cursor can be committed after it was read.
 *
 * KafkaJS 2 cannot assign partitions without a group, so a throw-away group
 * (random id, never committing) is used.
 */
export async function readCursor(options: ReadCursorOptions): Promise<StoredCursor | undefined> {
  const { kafka, topic, feed, codec } = options
  const admin = kafka.admin()
  await admin.connect()
  const targets = new Map<number, bigint>()
  try {
    for (const p of await admin.fetchTopicOffsets(topic)) {
      if (BigInt(p.high) > BigInt(p.low)) targets.set(p.partition, BigInt(p.high))
    }
  } finally {
    await admin.disconnect()
  }
  if (targets.size === 0) return undefined

  const consumer = kafka.consumer({
    groupId: `invalidation-poller-cursor-read-${randomBytes(6).toString('hex')}`,
    readUncommitted: false,
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: 250,
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
  })
  let latest: InvalidationCursor | undefined
  let decodeError: unknown
  try {
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? 60_000
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `reading the cursor topic ${topic} to its end took longer than ${timeoutMs} ms (remaining partitions: ${[...targets.keys()].join(', ')})`,
            ),
          ),
        timeoutMs,
      )
      const check = () => {
        if (decodeError !== undefined) {
          clearTimeout(timer)
          reject(decodeError)
        } else if (targets.size === 0) {
          clearTimeout(timer)
          resolve()
        }
      }
      // END_BATCH_PROCESS also fires for batches holding only transaction markers,
      // which is what the end of a transactional topic always is.
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        const target = targets.get(payload.partition)
        if (target !== undefined && BigInt(payload.lastOffset) + 1n >= target)
          targets.delete(payload.partition)
        check()
      })
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        clearTimeout(timer)
        reject(payload.error)
      })
      consumer
        .run({
          eachMessage: async ({ message }) => {
            if (message.key?.toString('utf8') !== feed || message.value === null) return
            try {
              latest = await codec.decode(message.value)
            } catch (err) {
              decodeError ??= err
            }
          },
        })
        .catch((err: unknown) => {
          clearTimeout(timer)
          reject(err)
        })
    })
  } finally {
    await consumer.disconnect()
  }
  return latest === undefined
    ? undefined
    : {
        feed: latest.feed,
        lastItemId: latest.lastItemId,
        feedCurrentTime: latest.feedCurrentTime,
        updatedAt: latest.updatedAt,
      }
}
