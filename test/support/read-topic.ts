/**
 * Reads a whole topic as it stands, for exactly-once assertions: "N records and
 * no more" needs an end to read to, not a count to wait for. The end is what a
 * read-committed ListOffsets answers at call time, the last stable offset:
 * records of a transaction still open then are not read (even with
 * `readUncommitted`, which adds the aborted records below that end), so call it
 * after the writers finished or were fenced.
 */
import { TopicReader, type Kafka } from '@tep/kafka'
import { collected, type CollectedMessage } from './kafka-test-kit.ts'

export interface ReadTopicOptions {
  readUncommitted?: boolean
  timeoutMs?: number
}

export async function readTopic(
  kafka: Kafka,
  topic: string,
  options: ReadTopicOptions = {},
): Promise<CollectedMessage[]> {
  const received: CollectedMessage[] = []
  // A bounded TopicReader: every partition from its first offset (a partition whose
  // records were all deleted or compacted away has nothing left to read) to the end
  // offsets it captures at start.
  const reader = new TopicReader({
    kafka,
    topics: [topic],
    maxWaitMs: 200,
    ...(options.readUncommitted === true ? { readUncommitted: true } : {}),
    onRecords: (batch) => {
      for (const r of batch.records) received.push(collected(topic, batch.partition, r))
    },
  })
  const timeoutMs = options.timeoutMs ?? 30_000
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      (async () => {
        await reader.start()
        await reader.done()
      })(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const where = reader.unfinished().join(', ')
          reject(new Error(`reading ${topic} to its end did not finish within ${timeoutMs} ms (partitions left: ${where})`))
        }, timeoutMs)
      }),
    ])
  } finally {
    clearTimeout(timer)
    await reader.stop()
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
