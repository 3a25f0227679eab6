import { randomBytes } from 'node:crypto'
import { isRetriable } from '@tep/errors'
import type { KafkaLogger, TopicCodec } from '@tep/kafka'
import type { Merchant, Shop } from '@tep/schemas'
import type { Readiness } from '@tep/observability'
import type { Consumer, Kafka } from 'kafkajs'
import type { MerchantTables } from './snapshot-table.ts'

export interface TableReaderOptions {
  kafka: Kafka
  tables: MerchantTables
  shops: { topic: string; codec: TopicCodec<Shop> }
  merchants: { topic: string; codec: TopicCodec<Merchant> }
  /** Prefix of the throw-away consumer group (a random suffix is added). */
  groupPrefix: string
  readiness?: Readiness
  logger?: KafkaLogger
  /** Told about every applied record (fetched-snapshot confirmation). */
  onApplied?: (entity: 'SHOP' | 'MERCHANT', uid: string, fetchedAt: number | null) => void
  /** Records of the compacted topics that could not be decoded and were skipped. */
  onSkipped?: (topic: string, error: unknown) => void
  consumer?: { sessionTimeout?: number; heartbeatInterval?: number; maxWaitTimeInMs?: number }
}

export const TABLE_CHECK = 'table'

/**
 * Feeds the local shop and merchant tables from the compacted topics.
 *
 * Every instance needs ALL partitions of both topics, so this is not a member of
 * the service's group: it joins a group of its own (random id, never committing
 * offsets, so the broker forgets it when it leaves) and reads from the
 * beginning, read-committed (only what the refresher committed), applying
 * records in offset order; a null value (tombstone) deletes the entry.
 *
 * "Caught up" means: every partition has been read up to the end offset it had
 * when the reader started. Until then the readiness check `table` is false.
 */
export class TableReader {
  readonly #options: TableReaderOptions
  #consumer: Consumer | undefined
  #stopped = false
  #caughtUp: Promise<void>
  #resolveCaughtUp: () => void = () => {}
  /** `${topic}:${partition}` → end offset to reach; deleted once reached. */
  readonly #remaining = new Map<string, bigint>()

  constructor(options: TableReaderOptions) {
    this.#options = options
    this.#caughtUp = new Promise((resolve) => {
      this.#resolveCaughtUp = resolve
    })
    options.readiness?.register(TABLE_CHECK, 'reading the compacted shop and merchant topics')
  }

  /** Resolves once the tables hold everything the topics had at start. */
  whenCaughtUp(): Promise<void> {
    return this.#caughtUp
  }

  get caughtUp(): boolean {
    return this.#remaining.size === 0 && this.#consumer !== undefined
  }

  async start(): Promise<void> {
    const { kafka, shops, merchants, logger } = this.#options
    const admin = kafka.admin()
    await admin.connect()
    try {
      for (const topic of [shops.topic, merchants.topic]) {
        for (const p of await admin.fetchTopicOffsets(topic)) {
          const high = BigInt(p.high)
          if (high > BigInt(p.low)) this.#remaining.set(`${topic}:${p.partition}`, high)
        }
      }
    } finally {
      await admin.disconnect()
    }
    const groupId = `${this.#options.groupPrefix}-${randomBytes(6).toString('hex')}`
    const consumer = kafka.consumer({
      groupId,
      readUncommitted: false,
      allowAutoTopicCreation: false,
      sessionTimeout: this.#options.consumer?.sessionTimeout ?? 30_000,
      heartbeatInterval: this.#options.consumer?.heartbeatInterval ?? 3_000,
      maxWaitTimeInMs: this.#options.consumer?.maxWaitTimeInMs ?? 500,
    })
    this.#consumer = consumer
    // END_BATCH_PROCESS also fires for fetches that held only transaction markers
    // or aborted records, whose offsets never reach eachBatch: without it a
    // partition ending in a commit marker would never count as caught up.
    consumer.on(consumer.events.END_BATCH_PROCESS, (e) =>
      this.#progress(e.payload.topic, e.payload.partition, e.payload.lastOffset),
    )
    consumer.on(consumer.events.CRASH, (e) => {
      logger?.error({ err: e.payload.error, restart: e.payload.restart }, 'table reader crashed')
      // KafkaJS restarts the consumer after retriable errors; otherwise the table
      // would silently stop following the refresher, so the instance says so.
      if (!e.payload.restart && !this.#stopped) {
        const reason = e.payload.error instanceof Error ? e.payload.error.message : String(e.payload.error)
        this.#options.readiness?.set(TABLE_CHECK, false, `table reader stopped after an error: ${reason}`)
      }
    })
    await consumer.connect()
    await consumer.subscribe({ topics: [shops.topic, merchants.topic], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, heartbeat, isRunning }) => {
        const isShop = batch.topic === shops.topic
        for (const message of batch.messages) {
          if (!isRunning() || this.#stopped) return
          const uid = message.key?.toString('utf8')
          if (uid === undefined || uid === '') {
            this.#options.onSkipped?.(batch.topic, new Error(`record at offset ${message.offset} has no key`))
            continue
          }
          if (isShop) await this.#apply('SHOP', uid, message.value, shops.codec, batch.topic)
          else await this.#apply('MERCHANT', uid, message.value, merchants.codec, batch.topic)
        }
        await heartbeat()
      },
    })
    this.#checkDone()
    logger?.info({ groupId, partitionsToCatchUp: this.#remaining.size }, 'table reader started')
  }

  async stop(): Promise<void> {
    this.#stopped = true
    await this.#consumer?.disconnect()
  }

  async #apply<T extends Shop | Merchant>(
    entity: 'SHOP' | 'MERCHANT',
    uid: string,
    value: Buffer | null,
    codec: TopicCodec<T>,
    topic: string,
  ): Promise<void> {
    const table = (entity === 'SHOP'
      ? this.#options.tables.shops
      : this.#options.tables.merchants) as unknown as {
      applyFromTopic(uid: string, value: T | null): void
    }
    if (value === null) {
      table.applyFromTopic(uid, null)
      this.#options.onApplied?.(entity, uid, null)
      return
    }
    let decoded: T
    for (let attempt = 1; ; attempt++) {
      try {
        decoded = await codec.decode(value)
        break
      } catch (err) {
        if (!isRetriable(err) || this.#stopped) {
          // A record the single writer should never have produced: keep the table
          // usable (the entry falls back to API reads) and make it visible.
          this.#options.onSkipped?.(topic, err)
          return
        }
        const delay = Math.min(30_000, 200 * 2 ** Math.min(attempt, 8))
        this.#options.logger?.warn(
          { err, topic, uid, attempt, delayMs: delay },
          'schema registry unavailable while loading the table; retrying',
        )
        await new Promise((r) => setTimeout(r, delay))
      }
    }
    if (decoded.uid !== uid) {
      this.#options.onSkipped?.(topic, new Error(`record key ${uid} differs from its uid ${decoded.uid}`))
      return
    }
    table.applyFromTopic(uid, decoded)
    this.#options.onApplied?.(entity, uid, decoded.fetchedAt)
  }

  #progress(topic: string, partition: number, lastOffset: string): void {
    if (this.#remaining.size === 0) return
    const key = `${topic}:${partition}`
    const target = this.#remaining.get(key)
    if (target !== undefined && BigInt(lastOffset) + 1n >= target) {
      this.#remaining.delete(key)
      this.#checkDone()
    }
  }

  #checkDone(): void {
    if (this.#remaining.size > 0 || this.#consumer === undefined) {
      if (this.#remaining.size > 0)
        this.#options.readiness?.set(
          TABLE_CHECK,
          false,
          `catching up: ${this.#remaining.size} partition(s) behind their start end offset`,
        )
      return
    }
    const { tables } = this.#options
    this.#options.readiness?.set(
      TABLE_CHECK,
      true,
      `caught up: ${tables.shops.size} shops, ${tables.merchants.size} merchants`,
    )
    this.#resolveCaughtUp()
  }
}
