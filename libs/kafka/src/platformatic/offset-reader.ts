import { randomBytes } from 'node:crypto'
import { Admin, Consumer } from '@platformatic/kafka'
import type { Kafka } from '../kafka-client.ts'
import { requireConnection } from '../kafka-client.ts'
import { baseOptions } from './connection.ts'

/** Where a partition's log starts and ends. */
export interface PartitionOffsets {
  partition: number
  low: bigint
  /** The high watermark, or with `readCommitted` the last stable offset (records of open transactions not counted). */
  high: bigint
}

const EARLIEST = -2n
const LATEST = -1n
const READ_UNCOMMITTED = 0
const READ_COMMITTED = 1

/**
 * Topic and group offsets for metrics, tools and start-up decisions (the
 * ingest's lag gauge, bank-sync's "how far to rebuild a partition", the
 * backfill's ranges), on @platformatic/kafka. One long-lived reader per use:
 * its connections are reused across calls, so an interval refresh costs two
 * requests, not a connection set-up.
 */
export class OffsetReader {
  readonly #consumer: Consumer<Buffer, Buffer, Buffer, Buffer>
  readonly #admin: Admin

  constructor(kafka: Kafka) {
    const connection = requireConnection(kafka, 'OffsetReader')
    // ListOffsets is a consumer request in @platformatic/kafka; this consumer never joins its group.
    this.#consumer = new Consumer({ ...baseOptions(connection, '-offsets'), groupId: `tep-offsets-${randomBytes(6).toString('hex')}` })
    this.#admin = new Admin(baseOptions(connection, '-offsets-admin'))
  }

  /**
   * Log start and end of every partition of `topic`: the high watermark, or the
   * last stable offset with `readCommitted` (what a read-committed reader reads to).
   */
  async topicOffsets(topic: string, options: { readCommitted?: boolean } = {}): Promise<PartitionOffsets[]> {
    const isolationLevel = options.readCommitted === true ? READ_COMMITTED : READ_UNCOMMITTED
    const [lows, highs] = await Promise.all([
      this.#consumer.listOffsets({ topics: [topic], timestamp: EARLIEST }),
      this.#consumer.listOffsets({ topics: [topic], timestamp: LATEST, isolationLevel }),
    ])
    return (highs.get(topic) ?? []).map((high, partition) => ({ partition, low: lows.get(topic)?.[partition] ?? 0n, high }))
  }

  /**
   * Per partition of `topic`, the offset of the first record written at or after
   * `timestamp` (ms since the epoch); -1 where there is none (the range ends at the log's end).
   */
  async offsetsAt(topic: string, timestamp: number): Promise<Map<number, bigint>> {
    const found = await this.#consumer.listOffsets({ topics: [topic], timestamp: BigInt(timestamp) })
    return new Map((found.get(topic) ?? []).map((offset, partition) => [partition, offset]))
  }

  /** The offsets `groupId` committed on `topic`, per partition (partitions without a commit are absent). */
  async committedOffsets(groupId: string, topic: string): Promise<Map<number, bigint>> {
    const [group] = await this.#admin.listConsumerGroupOffsets({ groups: [groupId] })
    const out = new Map<number, bigint>()
    for (const t of group?.topics ?? [])
      if (t.name === topic)
        for (const p of t.partitions) if (p.committedOffset >= 0n) out.set(p.partitionIndex, p.committedOffset)
    return out
  }

  /** Commits `offsets` (next offset to read, per partition of `topic`) for `groupId`, which must have no live member. */
  async setCommittedOffsets(groupId: string, topic: string, offsets: ReadonlyArray<{ partition: number; offset: bigint }>): Promise<void> {
    await this.#admin.alterConsumerGroupOffsets({
      groupId,
      topics: [{ name: topic, partitionOffsets: offsets.map((o) => ({ partition: o.partition, offset: o.offset })) }],
    })
  }

  async close(): Promise<void> {
    await Promise.all([this.#consumer.close(true).catch(() => {}), this.#admin.close().catch(() => {})])
  }
}
