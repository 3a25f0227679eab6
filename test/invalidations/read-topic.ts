import { randomBytes } from 'node:crypto'
import type { Kafka, KafkaMessage } from 'kafkajs'

export interface ReadRecord {
  partition: number
  offset: string
  key: string | null
  value: Buffer | null
}

/**
 * Everything committed to `topic` up to its end offsets at the time of the
 * call, read committed, in offset order per partition. Unlike "collect N",
 * this also proves that nothing beyond the expected records is there.
 */
export async function readTopicToEnd(kafka: Kafka, topic: string, timeoutMs = 30_000): Promise<ReadRecord[]> {
  const admin = kafka.admin()
  await admin.connect()
  const remaining = new Map<number, bigint>()
  try {
    for (const p of await admin.fetchTopicOffsets(topic))
      if (BigInt(p.high) > BigInt(p.low)) remaining.set(p.partition, BigInt(p.high))
  } finally {
    await admin.disconnect()
  }
  const records: ReadRecord[] = []
  if (remaining.size === 0) return records
  const consumer = kafka.consumer({
    groupId: `read-${topic}-${randomBytes(4).toString('hex')}`,
    maxWaitTimeInMs: 200,
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
    allowAutoTopicCreation: false,
  })
  try {
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `${topic} not read to its end within ${timeoutMs} ms; partitions left: ${[...remaining.keys()].join(',')}`,
            ),
          ),
        timeoutMs,
      )
      // Fires for marker-only batches too (a transactional topic ends with a marker).
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        const target = remaining.get(payload.partition)
        if (target !== undefined && BigInt(payload.lastOffset) + 1n >= target)
          remaining.delete(payload.partition)
        if (remaining.size === 0) {
          clearTimeout(timer)
          resolve()
        }
      })
      consumer
        .run({
          eachMessage: async ({ partition, message }: { partition: number; message: KafkaMessage }) => {
            const target = remaining.get(partition)
            if (target === undefined || BigInt(message.offset) >= target) return
            records.push({
              partition,
              offset: message.offset,
              key: message.key?.toString('utf8') ?? null,
              value: message.value,
            })
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
  return records
}
