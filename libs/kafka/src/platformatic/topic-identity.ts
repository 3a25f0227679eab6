import { randomBytes } from 'node:crypto'
import { Consumer } from '@platformatic/kafka'
import type { Kafka } from '../kafka-client.ts'
import { requireConnection } from '../kafka-client.ts'
import { baseOptions } from './connection.ts'

/** What identifies a topic's data now: its id (new when recreated) and each partition's log range. */
export interface TopicIdentity {
  name: string
  /** The topic id (KIP-516): a deleted and recreated topic has a new one. */
  id: string
  /** Per partition (index = partition): log start offset and high watermark. */
  partitions: Array<{ low: bigint; high: bigint }>
}

export interface ClusterTopics {
  clusterId: string
  /** The topics asked for that exist. */
  topics: Map<string, TopicIdentity>
}

const EARLIEST = -2n
const LATEST = -1n

/**
 * Cluster id, topic ids and partition offset ranges of `topics`, in one short
 * call (its own client, closed afterwards). A local copy of a topic (the
 * ingest's table checkpoint) is checked against these before it is trusted:
 * another cluster, a recreated topic, offsets past the end or below the log
 * start each mean the copy no longer describes the topic.
 */
export async function describeTopics(kafka: Kafka, topics: string[]): Promise<ClusterTopics> {
  const connection = requireConnection(kafka, 'describeTopics')
  // ListOffsets and Metadata are consumer requests in @platformatic/kafka; this consumer never joins its group.
  const consumer = new Consumer({
    ...baseOptions(connection, '-describe'),
    groupId: `tep-describe-${randomBytes(6).toString('hex')}`,
  })
  try {
    const metadata = await consumer.metadata({ topics, forceUpdate: true })
    const [lows, highs] = await Promise.all([
      consumer.listOffsets({ topics, timestamp: EARLIEST }),
      consumer.listOffsets({ topics, timestamp: LATEST }),
    ])
    const out = new Map<string, TopicIdentity>()
    for (const name of topics) {
      const t = metadata.topics.get(name)
      if (t === undefined) continue
      out.set(name, {
        name,
        id: t.id,
        partitions: (highs.get(name) ?? []).map((high, partition) => ({ low: lows.get(name)?.[partition] ?? 0n, high })),
      })
    }
    return { clusterId: metadata.id, topics: out }
  } finally {
    await consumer.close(true).catch(() => {})
  }
}
