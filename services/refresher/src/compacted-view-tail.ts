import { randomBytes } from 'node:crypto'
import type { KafkaLogger, TopicCodec } from '@tep/kafka'
import type { Readiness } from '@tep/observability'
import type { Merchant, Shop } from '@tep/schemas'
import type { Consumer, Kafka } from 'kafkajs'
import type { EntityVersions } from './entity-versions.ts'
import type { EntityKind } from './refresh-input.ts'

export interface CompactedViewTailOptions {
  kafka: Kafka
  views: Record<EntityKind, EntityVersions>
  shops: { topic: string; codec: TopicCodec<Shop> }
  merchants: { topic: string; codec: TopicCodec<Merchant> }
  groupPrefix: string
  readiness?: Readiness
  logger?: KafkaLogger
  onUndecodable?: (topic: string, err: unknown) => void
}

export const VIEW_CHECK = 'compacted-topics'

interface CatchUp {
  remaining: Map<string, bigint>
  promise: Promise<void>
  resolve: () => void
}

/**
 * Reads `merchant.shops.v1` and `merchant.merchants.v1` from the beginning and
 * keeps reading (read committed), feeding the version view. The view is how
 * the refresher knows what the table holds, so every instance reads all
 * partitions: a group of its own with a random id, never committing offsets.
 *
 * `catchUp()` snapshots the current end offsets and resolves once they are
 * read; the refresher calls it at start (readiness) and after every partition
 * assignment, because the previous owner of a partition may have written
 * versions this instance has not read yet.
 */
export class CompactedViewTail {
  private readonly options: CompactedViewTailOptions
  private consumer: Consumer | undefined
  private readonly positions = new Map<string, bigint>()
  private current: CatchUp | undefined
  private caughtUpOnce = false

  constructor(options: CompactedViewTailOptions) {
    this.options = options
    options.readiness?.register(VIEW_CHECK, 'reading the compacted shop and merchant topics')
  }

  async start(): Promise<void> {
    const { kafka, shops, merchants, views, logger } = this.options
    const consumer = kafka.consumer({
      groupId: `${this.options.groupPrefix}-${randomBytes(6).toString('hex')}`,
      readUncommitted: false,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 250,
      sessionTimeout: 30_000,
      heartbeatInterval: 3_000,
    })
    this.consumer = consumer
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      // Fires for marker-only batches too: the end of a transactional topic is a marker.
      this.advance(`${payload.topic}:${payload.partition}`, BigInt(payload.lastOffset) + 1n)
    })
    await consumer.connect()
    await consumer.subscribe({ topics: [shops.topic, merchants.topic], fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ topic, message }) => {
        const key = message.key?.toString('utf8')
        if (key === undefined) return
        const entity: EntityKind = topic === shops.topic ? 'shop' : 'merchant'
        if (message.value === null) {
          // A tombstone has no fetchedAt; the time it was written is its version.
          views[entity].observeCommitted(key, { version: Number(message.timestamp), deleted: true })
          return
        }
        try {
          const value =
            entity === 'shop'
              ? await shops.codec.decode(message.value)
              : await merchants.codec.decode(message.value)
          views[entity].observeCommitted(key, { version: value.fetchedAt, deleted: false })
        } catch (err) {
          logger?.warn(
            { err, topic, offset: message.offset, key },
            'undecodable record on a compacted topic; its key keeps the version known so far',
          )
          this.options.onUndecodable?.(topic, err)
        }
      },
    })
    await this.catchUp()
  }

  /** Resolves once everything committed to the topics before this call has been read. */
  async catchUp(): Promise<void> {
    const { kafka, shops, merchants, readiness, logger } = this.options
    const admin = kafka.admin()
    await admin.connect()
    const remaining = new Map<string, bigint>()
    try {
      for (const topic of [shops.topic, merchants.topic]) {
        for (const p of await admin.fetchTopicOffsets(topic)) {
          const key = `${topic}:${p.partition}`
          const high = BigInt(p.high)
          if (high > BigInt(p.low) && (this.positions.get(key) ?? 0n) < high) remaining.set(key, high)
        }
      }
    } finally {
      await admin.disconnect()
    }
    if (remaining.size === 0) {
      this.markCaughtUp()
      return
    }
    let resolve!: () => void
    const promise = new Promise<void>((r) => (resolve = r))
    const catchUp = { remaining, promise, resolve }
    this.current = catchUp
    if (!this.caughtUpOnce)
      readiness?.set(VIEW_CHECK, false, `reading ${remaining.size} partition(s) to their end`)
    await promise
    logger?.debug({}, 'compacted topics caught up')
  }

  /** The latest requested catch-up (resolved when there is none pending). */
  whenCaughtUp(): Promise<void> {
    return this.current?.promise ?? Promise.resolve()
  }

  async stop(): Promise<void> {
    const consumer = this.consumer
    this.consumer = undefined
    if (consumer !== undefined) await consumer.disconnect()
  }

  private advance(key: string, position: bigint): void {
    if ((this.positions.get(key) ?? 0n) < position) this.positions.set(key, position)
    const current = this.current
    if (current === undefined) return
    const target = current.remaining.get(key)
    if (target !== undefined && position >= target) current.remaining.delete(key)
    if (current.remaining.size === 0) {
      this.current = undefined
      this.markCaughtUp()
      current.resolve()
    }
  }

  private markCaughtUp(): void {
    this.caughtUpOnce = true
    this.options.readiness?.set(VIEW_CHECK, true)
  }
}
