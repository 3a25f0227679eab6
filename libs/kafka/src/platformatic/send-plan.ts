import type { Producer } from '@platformatic/kafka'
import { assignPartitions, chunkMessages, toWireMessage, type WireMessage } from './eos-transaction.ts'

/** A record to write with the transactional writer or the record producer. */
export interface OutgoingMessage {
  /** Partitioned by Java's murmur2 on the key; a message without key goes round robin. */
  key?: Buffer | string | null
  /** Already serialized (e.g. a TopicCodec's encode); null is a tombstone. */
  value: Buffer | null
  headers?: Record<string, Buffer | string>
  /** Explicit partition instead of the key's. */
  partition?: number
}


/** The messages of one `send(topic, ...)` in @platformatic/kafka's produce shape. */
export function toWireMessages(topic: string, messages: readonly OutgoingMessage[]): WireMessage[] {
  return messages.map((m) =>
    toWireMessage({
      topic,
      key: m.key ?? null,
      value: m.value,
      ...(m.headers === undefined ? {} : { headers: m.headers }),
      ...(m.partition === undefined ? {} : { partition: m.partition }),
    }),
  )
}

/**
 * Spreads messages without key (and without explicit partition) over the
 * topic's partitions in turn, as KafkaJS did. @platformatic/kafka's
 * compatibilityPartitioner puts every key-less message in partition 0.
 */
export function spreadKeyless(
  messages: WireMessage[],
  partitionCount: (topic: string) => number,
  next: Map<string, number>,
): void {
  for (const m of messages) {
    if (m.partition !== undefined || m.key !== undefined) continue
    const turn = next.get(m.topic) ?? 0
    m.partition = turn % partitionCount(m.topic)
    next.set(m.topic, turn + 1)
  }
}

/**
 * The sends that write `messages` in order: each message gets its partition up
 * front (the Java partitioner, as the producer would choose it), so that no
 * send holds more than PARTITION_CHUNK_BYTES for one partition (the broker
 * refuses a partition batch over message.max.bytes, 1 MB by default).
 *
 * The partition counts come from the client's metadata (cached). Asking for it
 * first also turns a missing topic into an error ("Unknown topic", after the
 * client's retries): a send to a missing topic never returns on 2.12.1.
 */
export async function planSends(
  producer: Producer<Buffer, Buffer, Buffer, Buffer>,
  messages: WireMessage[],
  roundRobin: Map<string, number>,
): Promise<WireMessage[][]> {
  if (messages.length === 0) return []
  // metadata() sorts the array it is given: a copy.
  const topics = [...new Set(messages.map((m) => m.topic))]
  const metadata = await producer.metadata({ topics: [...topics] })
  const partitionCount = (topic: string): number => {
    const count = metadata.topics.get(topic)?.partitionsCount
    if (count === undefined || count < 1) throw new Error(`no partition count for topic ${topic}`)
    return count
  }
  spreadKeyless(messages, partitionCount, roundRobin)
  assignPartitions(messages, partitionCount)
  return chunkMessages(messages)
}
