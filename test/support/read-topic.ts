/**
 * Reads a whole topic as it stands, for exactly-once assertions: "N records and
 * no more" needs an end to read to, not a count to wait for. The end is what a
 * read-committed ListOffsets answers at call time, the last stable offset:
 * records of a transaction still open then are not read (even with
 * `readUncommitted`, which adds the aborted records below that end), so call it
 * after the writers finished or were fenced.
 */
import type { Kafka } from 'kafkajs'
import type { CollectedMessage } from './kafka-test-kit.ts'
import { TEST_CONSUMER_DEFAULTS, uniqueName } from './kafka-test-kit.ts'

export interface ReadTopicOptions {
  readUncommitted?: boolean
  timeoutMs?: number
}

export async function readTopic(
  kafka: Kafka,
  topic: string,
  options: ReadTopicOptions = {},
): Promise<CollectedMessage[]> {
  const admin = kafka.admin()
  await admin.connect()
  let offsets: Awaited<ReturnType<typeof admin.fetchTopicOffsets>>
  try {
    offsets = await admin.fetchTopicOffsets(topic)
  } finally {
    await admin.disconnect()
  }
  const ends = new Map(offsets.map((p) => [p.partition, BigInt(p.high)]))
  // Start at the low watermark: a partition whose records were all deleted or
  // compacted away has nothing left to read, not a gap to wait for.
  const positions = new Map(offsets.map((p) => [p.partition, BigInt(p.low)]))
  const done = () => [...ends].every(([p, end]) => (positions.get(p) ?? 0n) >= end)
  const received: CollectedMessage[] = []
  if (done()) return received

  const consumer = kafka.consumer({
    ...TEST_CONSUMER_DEFAULTS,
    groupId: uniqueName(`read-${topic}`),
    readUncommitted: options.readUncommitted ?? false,
  })
  const timeoutMs = options.timeoutMs ?? 30_000
  try {
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const where = [...ends].map(([p, end]) => `p${p} at ${positions.get(p)}/${end}`).join(', ')
        reject(
          new Error(
            `reading ${topic} to its end did not finish within ${timeoutMs} ms (${where})`,
          ),
        )
      }, timeoutMs)
      // END_BATCH_PROCESS also fires for batches made only of control or aborted
      // records, which never reach eachMessage but still move the position.
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        const next = BigInt(payload.lastOffset) + 1n
        if (next > (positions.get(payload.partition) ?? 0n)) positions.set(payload.partition, next)
        if (done()) {
          clearTimeout(timer)
          resolve()
        }
      })
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        // A retriable error (e.g. COORDINATOR_LOAD_IN_PROGRESS on a fresh broker): KafkaJS restarts the consumer.
        if (payload.restart) return
        clearTimeout(timer)
        reject(payload.error)
      })
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            if (BigInt(message.offset) >= (ends.get(partition) ?? 0n)) return
            received.push({
              topic,
              partition,
              offset: message.offset,
              key: message.key,
              value: message.value,
              headers: message.headers ?? {},
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
  return received
}

/** Values of `messages` as UTF-8 strings, grouped by partition in offset order. */
export function valuesByPartition(messages: CollectedMessage[]): Map<number, string[]> {
  const out = new Map<number, string[]>()
  for (const m of [...messages].sort(
    (a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)),
  )) {
    const list = out.get(m.partition) ?? []
    list.push(m.value?.toString('utf8') ?? '<null>')
    out.set(m.partition, list)
  }
  return out
}
