import { Consumer, FetchIsolationLevels } from '@platformatic/kafka'
import { platformaticSecurityOptions, type KafkaSecurity } from '@tep/kafka'
import { committedBatches } from './aborted-filter.ts'

/** One committed record as the checker sees it. */
export interface TopicRecord {
  topic: string
  partition: number
  offset: bigint
  /** Epoch milliseconds (create or log-append time, whatever the topic stores). */
  timestamp: number
  key: Buffer | null
  value: Buffer | null
  headers: Map<string, string>
}

export interface ReadOptions {
  brokers: string[]
  /** TLS and SASL to the brokers (the KAFKA_SECURITY_* variables); none: plaintext. */
  security?: KafkaSecurity
  topics: string[]
  /** Gives up (throws) when the topics are not read to their end within this time. Default 10 min. */
  timeoutMs?: number
  /** Called now and then with records read so far, for progress on long reads. */
  onProgress?: (read: number, total: bigint) => void
}

const MAX_BYTES = 16 * 1024 * 1024
const PARTITION_MAX_BYTES = 4 * 1024 * 1024

/**
 * Reads every committed record of `topics`, from each partition's log start to
 * its last stable offset at the time of the call, with plain Fetch requests
 * (isolation READ_COMMITTED) through @platformatic/kafka and the read_committed
 * rule of ./aborted-filter.ts: no consumer group, nothing committed, nothing of
 * the pipeline's own Kafka code path. Records of a transaction still open at
 * the start are not read (they are above the last stable offset).
 */
export async function readCommitted(options: ReadOptions): Promise<Map<string, TopicRecord[]>> {
  const consumer = new Consumer({
    clientId: 'tep-check-topics',
    groupId: `tep-check-topics-${process.pid}-${Date.now()}`,
    bootstrapBrokers: options.brokers,
    // Only the mapping of the security settings is shared with the pipeline; the reading stays the checker's own.
    ...platformaticSecurityOptions({ brokers: options.brokers, clientId: 'tep-check-topics', ...(options.security ? { security: options.security } : {}) }),
    timeout: 15_000,
    retries: 5,
  })
  const deadline = Date.now() + (options.timeoutMs ?? 600_000)
  try {
    const metadata = await consumer.metadata({ topics: options.topics, forceUpdate: true })
    const [starts, ends] = await Promise.all([
      consumer.listOffsets({ topics: options.topics, timestamp: -2n }),
      consumer.listOffsets({ topics: options.topics, isolationLevel: FetchIsolationLevels.READ_COMMITTED }),
    ])
    let total = 0n
    for (const topic of options.topics) {
      const s = starts.get(topic) ?? []
      ;(ends.get(topic) ?? []).forEach((end, p) => (total += end - (s[p] ?? 0n)))
    }
    let read = 0
    const out = new Map<string, TopicRecord[]>()
    for (const topic of options.topics) {
      const topicMeta = metadata.topics.get(topic)
      if (!topicMeta) throw new Error(`topic ${topic} does not exist on ${options.brokers.join(',')}`)
      const records: TopicRecord[] = []
      out.set(topic, records)
      const partitionEnds = ends.get(topic) ?? []
      const partitionStarts = starts.get(topic) ?? []
      for (let partition = 0; partition < topicMeta.partitionsCount; partition++) {
        let offset = partitionStarts[partition] ?? 0n
        const end = partitionEnds[partition] ?? 0n
        while (offset < end) {
          if (Date.now() > deadline) throw new Error(`reading ${topic}[${partition}] did not reach offset ${end} in time (at ${offset})`)
          const leader = (await consumer.metadata({ topics: [topic] })).topics.get(topic)!.partitions[partition]!.leader
          const response = await consumer.fetch({
            node: leader,
            topics: [
              {
                topicId: topicMeta.id,
                partitions: [{ partition, fetchOffset: offset, partitionMaxBytes: PARTITION_MAX_BYTES, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }],
              },
            ],
            isolationLevel: FetchIsolationLevels.READ_COMMITTED,
            maxWaitTime: 500,
            minBytes: 1,
            maxBytes: MAX_BYTES,
          })
          const answer = response.responses[0]?.partitions[0]
          if (!answer) continue
          if (answer.errorCode !== 0) throw new Error(`fetch of ${topic}[${partition}] at ${offset} failed with Kafka error code ${answer.errorCode}`)
          const batches = answer.records ?? []
          if (batches.length === 0) continue
          for (const batch of committedBatches(batches, answer.abortedTransactions)) {
            for (const record of batch.records) {
              const at = batch.firstOffset + BigInt(record.offsetDelta)
              if (at < offset || at >= end) continue
              const headers = new Map<string, string>()
              for (const [k, v] of record.headers) if (k) headers.set(k.toString('utf8'), v?.toString('utf8') ?? '')
              records.push({
                topic,
                partition,
                offset: at,
                timestamp: Number(batch.firstTimestamp + record.timestampDelta),
                key: record.key,
                value: record.value,
                headers,
              })
              read++
            }
          }
          const last = batches.at(-1)!
          // Also moves past control batches and aborted records, which the filter left out.
          offset = last.firstOffset + BigInt(last.lastOffsetDelta) + 1n
          options.onProgress?.(read, total)
        }
      }
    }
    return out
  } finally {
    await consumer.close(true).catch(() => {})
  }
}
