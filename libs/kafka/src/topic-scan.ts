import { randomBytes } from 'node:crypto'
import type { Kafka, KafkaMessage } from 'kafkajs'
import { TopicScanTimeoutError } from './errors.ts'

export interface TopicScanOptions {
  kafka: Kafka
  topic: string
  /** Start at the first record written at or after this moment; default: the beginning. */
  from?: Date
  /** Called for every record of the scan, in offset order per partition; a throw ends the scan with that error. */
  onMessage: (message: KafkaMessage, partition: number) => void | Promise<void>
  /** Prefix of the throw-away consumer group id (a random suffix is added). */
  groupPrefix: string
  /** Give up after this long (`TopicScanTimeoutError`, retriable); default 10 minutes. */
  timeoutMs?: number
}

/**
 * Reads `topic` once, read committed, from `from` to the end offsets it has
 * when the scan starts (records written during the scan are not included, so
 * a scan that republishes never reads its own output). The end offsets come
 * from a read-committed ListOffsets, i.e. the last stable offset: a transaction
 * still open at the start neither holds the scan back nor is part of it. A
 * throw-away consumer group (never committing) is used because KafkaJS 2 cannot
 * assign partitions without one.
 */
export async function scanTopic(options: TopicScanOptions): Promise<{ records: number }> {
  const { kafka, topic } = options
  const admin = kafka.admin()
  await admin.connect()
  const start = new Map<number, bigint>()
  const end = new Map<number, bigint>()
  try {
    const offsets = await admin.fetchTopicOffsets(topic)
    const fromOffsets =
      options.from === undefined
        ? undefined
        : await admin.fetchTopicOffsetsByTimestamp(topic, options.from.getTime())
    for (const p of offsets) {
      const byTime = fromOffsets?.find((o) => o.partition === p.partition)?.offset
      // -1 (no record at or after the moment) means: nothing to read in this partition.
      const first =
        byTime === undefined ? BigInt(p.low) : BigInt(byTime) < 0n ? BigInt(p.high) : BigInt(byTime)
      const high = BigInt(p.high)
      if (first < high) {
        start.set(p.partition, first)
        end.set(p.partition, high)
      }
    }
  } finally {
    await admin.disconnect()
  }
  if (end.size === 0) return { records: 0 }

  const consumer = kafka.consumer({
    groupId: `${options.groupPrefix}-${randomBytes(6).toString('hex')}`,
    readUncommitted: false,
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: 250,
    sessionTimeout: 30_000,
    heartbeatInterval: 3_000,
  })
  let records = 0
  try {
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? 600_000
      const timer = setTimeout(
        () =>
          reject(
            new TopicScanTimeoutError(
              `scanning ${topic} did not reach its end offsets within ${timeoutMs} ms (partitions left: ${[...end.keys()].join(', ')})`,
              { topic, timeoutMs, partitionsLeft: [...end.keys()] },
            ),
          ),
        timeoutMs,
      )
      const finish = (err?: unknown) => {
        clearTimeout(timer)
        if (err === undefined) resolve()
        else reject(err)
      }
      consumer.on(consumer.events.GROUP_JOIN, () => {
        for (const [partition, offset] of start)
          consumer.seek({ topic, partition, offset: offset.toString() })
      })
      // Also fires for marker-only batches, which end every transactional topic.
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        const target = end.get(payload.partition)
        if (target !== undefined && BigInt(payload.lastOffset) + 1n >= target) end.delete(payload.partition)
        if (end.size === 0) finish()
      })
      consumer.on(consumer.events.CRASH, ({ payload }) => finish(payload.error))
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            const offset = BigInt(message.offset)
            const first = start.get(partition)
            const last = end.get(partition)
            // Before the seek took effect, or past the end captured at start: not part of this scan.
            if (first === undefined || last === undefined || offset < first || offset >= last) return
            records += 1
            try {
              await options.onMessage(message, partition)
            } catch (err) {
              finish(err)
              throw err
            }
          },
        })
        .catch((err: unknown) => finish(err))
    })
  } finally {
    await consumer.disconnect()
  }
  return { records }
}
