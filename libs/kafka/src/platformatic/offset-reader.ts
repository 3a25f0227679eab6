import { randomBytes } from 'node:crypto'
import { Admin, Consumer } from '@platformatic/kafka'
import type { Kafka } from 'kafkajs'
import { requireConnection } from '../kafka-client.ts'
import { baseOptions } from './connection.ts'

/** Where a partition's log starts and ends (the high watermark: read-uncommitted end). */
export interface PartitionOffsets {
  partition: number
  low: bigint
  high: bigint
}

const EARLIEST = -2n
const LATEST = -1n

/**
 * Topic and group offsets for metrics and start-up decisions (the ingest's
 * lag gauge, bank-sync's "how far to rebuild a partition"), on
 * @platformatic/kafka. One long-lived reader per use: its connections are
 * reused across calls, so an interval refresh costs two requests, not a
 * connection set-up.
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

  /** Log start and high watermark of every partition of `topic`. */
  async topicOffsets(topic: string): Promise<PartitionOffsets[]> {
    const [lows, highs] = await Promise.all([
      this.#consumer.listOffsets({ topics: [topic], timestamp: EARLIEST }),
      this.#consumer.listOffsets({ topics: [topic], timestamp: LATEST }),
    ])
    return (highs.get(topic) ?? []).map((high, partition) => ({ partition, low: lows.get(topic)?.[partition] ?? 0n, high }))
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

  async close(): Promise<void> {
    await Promise.all([this.#consumer.close(true).catch(() => {}), this.#admin.close().catch(() => {})])
  }
}
