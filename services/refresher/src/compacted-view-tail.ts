import { randomBytes } from 'node:crypto'
import { isRetriable } from '@tep/errors'
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
  /** Partitions still to read up to their end offset; undefined until the end offsets are known. */
  remaining: Map<string, bigint> | undefined
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
  /** Catch-ups requested and not reached yet. */
  private readonly pending = new Set<CatchUp>()
  private caughtUpOnce = false
  private stopped = false

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
          // Registry unavailable: KafkaJS redelivers the record after a backoff; skipping it would lose a version.
          if (isRetriable(err)) throw err
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

  /**
   * Resolves once everything committed to the topics before this call has been
   * read. `whenCaughtUp()` waits for it from the moment of the call on, before
   * the end offsets are even known.
   */
  catchUp(): Promise<void> {
    let resolve!: () => void
    const promise = new Promise<void>((r) => (resolve = r))
    const catchUp: CatchUp = { remaining: undefined, promise, resolve }
    this.pending.add(catchUp)
    void this.measureUntilKnown(catchUp)
    return promise
  }

  /** Without the end offsets nobody can tell when the view is complete: keep trying while running. */
  private async measureUntilKnown(catchUp: CatchUp): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        await this.measure(catchUp)
        return
      } catch (err) {
        this.options.logger?.warn(
          { err, attempt },
          'reading the end offsets of the compacted topics failed; retrying',
        )
        await new Promise((r) => setTimeout(r, Math.min(30_000, 500 * 2 ** attempt)))
      }
    }
  }

  private async measure(catchUp: CatchUp): Promise<void> {
    const { kafka, shops, merchants, readiness } = this.options
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
    catchUp.remaining = remaining
    if (!this.caughtUpOnce && remaining.size > 0)
      readiness?.set(VIEW_CHECK, false, `reading ${remaining.size} partition(s) to their end`)
    this.settle(catchUp)
  }

  /** Resolves when every catch-up requested so far is reached. */
  async whenCaughtUp(): Promise<void> {
    await Promise.all([...this.pending].map((c) => c.promise))
  }

  async stop(): Promise<void> {
    this.stopped = true
    const consumer = this.consumer
    this.consumer = undefined
    if (consumer !== undefined) await consumer.disconnect()
  }

  private advance(key: string, position: bigint): void {
    if ((this.positions.get(key) ?? 0n) < position) this.positions.set(key, position)
    for (const catchUp of this.pending) {
      const target = catchUp.remaining?.get(key)
      if (target !== undefined && position >= target) catchUp.remaining!.delete(key)
      this.settle(catchUp)
    }
  }

  private settle(catchUp: CatchUp): void {
    if (catchUp.remaining === undefined || catchUp.remaining.size > 0) return
    this.pending.delete(catchUp)
    this.markCaughtUp()
    catchUp.resolve()
  }

  private markCaughtUp(): void {
    this.caughtUpOnce = true
    this.options.readiness?.set(VIEW_CHECK, true)
  }
}
