import {
  FetchIsolationLevels,
  ListOffsetTimestamps,
  type ClusterMetadata,
  type ConnectionPool,
  type Consumer,
  type RecordsBatch,
} from '@platformatic/kafka'
import type { KafkaLogger } from '../logger.ts'
import type { TopicPartition } from '../pipeline-types.ts'
import { hideAbortedBatches } from './aborted-filter.ts'
import { hasProtocolError } from './protocol-errors.ts'

const IS_CONTROL = 1 << 5

/** One record of a replayed partition (transaction markers and aborted records never appear). */
export interface ReplayedRecord {
  key: Buffer | null
  value: Buffer | null
  headers: Array<[Buffer | null, Buffer | null]>
  offset: bigint
  timestamp: bigint
}

/**
 * What one fetch brought for one partition: its committed records in offset order
 * (maybe none, e.g. when the fetch held only a transaction marker) and the offset
 * the partition has been read up to (exclusive), markers included.
 */
export interface ReplayBatch {
  topic: string
  partition: number
  records: ReplayedRecord[]
  /** The next offset to read: everything below it, records and markers, has been delivered. */
  nextOffset: bigint
  /** Aborted when this assignment ends (rebalance, lost membership, stop): give up retries then. */
  signal: AbortSignal
}

export interface ReplaySettings {
  maxWaitTimeMs: number
  maxBytes: number
  maxBytesPerPartition: number
  /** Pause after a failed round (metadata, fetch) before the next one; doubles up to 30×. */
  retryDelayMs: number
}

/**
 * Reads a fixed set of partitions read_committed from their first offset, one
 * fetch round after another, until `signal` aborts, handing each partition's
 * records and progress to `deliver` (awaited, one partition at a time, so a
 * partition's batches arrive in order and the next fetch waits for them).
 *
 * Aborted transactions are hidden twice: by @platformatic/kafka's own
 * read_committed filter, then the Java way by `hideAbortedBatches` (the client's
 * filter keeps one range per producer and lets interleaved aborts through).
 * Fetches go over `pool`, not the group client's connections, so that a long
 * poll never queues a heartbeat or a JoinGroup behind it.
 */
export async function replayPartitions(
  consumer: Consumer,
  pool: ConnectionPool,
  partitions: TopicPartition[],
  deliver: (batch: ReplayBatch) => Promise<void>,
  settings: ReplaySettings,
  signal: AbortSignal,
  logger: KafkaLogger,
): Promise<void> {
  if (partitions.length === 0) return
  const positions = new Map<string, bigint>()
  const key = (topic: string, partition: number) => `${topic}:${partition}`
  const topics = [...new Set(partitions.map((tp) => tp.topic))]
  let failures = 0
  let forceMetadata = false
  let startsKnown = false

  while (!signal.aborted) {
    try {
      const metadata = await consumer.metadata({ topics, forceUpdate: forceMetadata })
      forceMetadata = false
      if (!startsKnown) {
        await readStartOffsets(consumer, partitions, positions)
        startsKnown = true
      }
      if (signal.aborted) return
      const batches = await fetchRound(consumer, pool, metadata, partitions, positions, settings)
      failures = 0
      for (const batch of batches) {
        if (signal.aborted) return
        await deliver({ ...batch, signal })
        positions.set(key(batch.topic, batch.partition), batch.nextOffset)
      }
    } catch (err) {
      if (signal.aborted) return
      failures += 1
      forceMetadata = true
      const reset = outOfRange(err)
      if (reset !== undefined) {
        // Records below the log start are gone (deleted, not compacted): go on from the new start.
        startsKnown = false
        logger.warn({ err: reset }, 'replay: offset out of range; restarting those partitions at their log start')
        failures = 0
        continue
      }
      const delayMs = Math.min(30 * settings.retryDelayMs, settings.retryDelayMs * 2 ** Math.min(failures - 1, 5))
      logger.warn({ err, attempt: failures, delayMs }, 'replay: fetch round failed; retrying')
      await abortableDelay(delayMs, signal)
    }
  }
}

async function readStartOffsets(
  consumer: Consumer,
  partitions: TopicPartition[],
  positions: Map<string, bigint>,
): Promise<void> {
  const byTopic: Record<string, number[]> = {}
  for (const { topic, partition } of partitions) (byTopic[topic] ??= []).push(partition)
  const offsets = await consumer.listOffsets({
    topics: Object.keys(byTopic),
    partitions: byTopic,
    timestamp: ListOffsetTimestamps.EARLIEST,
    isolationLevel: FetchIsolationLevels.READ_COMMITTED,
  })
  for (const { topic, partition } of partitions) {
    const start = offsets.get(topic)?.[partition]
    const k = `${topic}:${partition}`
    const known = positions.get(k) ?? 0n
    // Never backwards: after an out-of-range answer only the partition below its log start moves.
    positions.set(k, typeof start === 'bigint' && start > known ? start : known)
  }
}

type Fetched = Omit<ReplayBatch, 'signal'>

/** One fetch per leader, concurrently; per partition the committed records and the next offset. */
async function fetchRound(
  consumer: Consumer,
  pool: ConnectionPool,
  metadata: ClusterMetadata,
  partitions: TopicPartition[],
  positions: Map<string, bigint>,
  settings: ReplaySettings,
): Promise<Fetched[]> {
  const byLeader = new Map<number, Map<string, TopicPartition[]>>()
  for (const tp of partitions) {
    const topic = metadata.topics.get(tp.topic)
    const leader = topic?.partitions[tp.partition]?.leader
    if (topic === undefined || leader === undefined || leader < 0)
      throw new Error(`no leader known for ${tp.topic}:${tp.partition}`)
    const node = byLeader.get(leader) ?? new Map<string, TopicPartition[]>()
    byLeader.set(leader, node)
    const list = node.get(topic.id) ?? []
    node.set(topic.id, list)
    list.push(tp)
  }
  const rounds = await Promise.all(
    [...byLeader].map(async ([node, byTopicId]) => {
      const requested = new Map<string, TopicPartition>()
      const response = await consumer.fetch({
        node,
        connectionPool: pool,
        isolationLevel: FetchIsolationLevels.READ_COMMITTED,
        maxWaitTime: settings.maxWaitTimeMs,
        maxBytes: settings.maxBytes,
        topics: [...byTopicId].map(([topicId, tps]) => ({
          topicId,
          partitions: tps.map((tp) => {
            requested.set(`${topicId}:${tp.partition}`, tp)
            return {
              partition: tp.partition,
              fetchOffset: positions.get(`${tp.topic}:${tp.partition}`)!,
              partitionMaxBytes: settings.maxBytesPerPartition,
              currentLeaderEpoch: -1,
              lastFetchedEpoch: -1,
            }
          }),
        })),
      })
      const out: Fetched[] = []
      for (const t of response.responses)
        for (const p of t.partitions) {
          // A fetch session may answer for partitions this request did not name: stale, ignored.
          const tp = requested.get(`${t.topicId}:${p.partitionIndex}`)
          if (tp === undefined || !p.records || p.records.length === 0) continue
          const from = positions.get(`${tp.topic}:${tp.partition}`)!
          out.push({ ...tp, ...committedRecords(hideAbortedBatches(p.records, p.abortedTransactions), from) })
        }
      return out
    }),
  )
  return rounds.flat()
}

/** Data records at or after `from` (a batch may start before the fetch offset) and the offset after the last batch. */
function committedRecords(batches: RecordsBatch[], from: bigint): { records: ReplayedRecord[]; nextOffset: bigint } {
  const records: ReplayedRecord[] = []
  let nextOffset = from
  for (const batch of batches) {
    const end = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n
    if (end > nextOffset) nextOffset = end
    if ((batch.attributes & IS_CONTROL) !== 0) continue
    for (const r of batch.records) {
      const offset = batch.firstOffset + BigInt(r.offsetDelta)
      if (offset < from) continue
      records.push({
        key: r.key,
        value: r.value,
        headers: r.headers,
        offset,
        timestamp: batch.firstTimestamp + r.timestampDelta,
      })
    }
  }
  return { records, nextOffset }
}

function outOfRange(err: unknown): unknown {
  return hasProtocolError(err, 'OFFSET_OUT_OF_RANGE') ? err : undefined
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}
