import type { ChildProcess } from 'node:child_process'
import { isRetriable } from '@tep/errors'
import { TopicReader, type KafkaLogger, type ReadBatch, type TopicCodec, type Kafka } from '@tep/kafka'
import type { Merchant, Shop } from '@tep/schemas'
import type { Readiness } from '@tep/observability'
import type avro from 'avsc'
import { AvroTableWriter } from './avro-table-writer.ts'
import type { MerchantTables } from './snapshot-table.ts'
import { TableCheckpointer, type TableCheckpointConfig } from './table-checkpointer.ts'
import { defaultLoaderProcesses, planLoaderSharesOf } from './loader-shares.ts'
import {
  collectLoadGarbage,
  loadInChildProcesses,
  type TableConsumerSettings,
  type TableLoaderConfig,
  type TablePartition,
  type TablePositions,
} from './table-loader-client.ts'

export type {
  TableLoaderConfig,
  TablePartition,
  TableLoaderData,
  TableLoaderMessage,
  TablePositions,
} from './table-loader-client.ts'

export interface TableReaderOptions {
  kafka: Kafka
  tables: MerchantTables
  shops: { topic: string; codec: TopicCodec<Shop> }
  merchants: { topic: string; codec: TopicCodec<Merchant> }
  readiness?: Readiness
  logger?: KafkaLogger
  /** Told about every applied record (fetched-snapshot confirmation). */
  onApplied?: (entity: 'SHOP' | 'MERCHANT', uid: string, fetchedAt: number | null) => void
  /** The reader stopped for good after an error (applying a record threw). */
  onFatal?: (error: unknown) => void
  /** Records of the compacted topics that could not be decoded and were skipped. */
  onSkipped?: (topic: string, error: unknown) => void
  /** Only `maxWaitTimeInMs` applies (the long-poll wait at the end of the topics); the group settings are the service's. */
  consumer?: TableConsumerSettings
  /**
   * Load the bulk of the topics in a child process (see TableLoaderConfig);
   * without it the whole load runs on the calling thread.
   */
  loader?: TableLoaderConfig
  /** Fetch limits (TopicReader defaults: 4 MiB per partition, 16 MiB per answer). */
  fetch?: { maxBytesPerPartition?: number; maxBytes?: number }
  /**
   * Keep following the topics once caught up (default true). The loader
   * process reads only up to the end offsets at start, so that the tables and
   * `positions()` stay consistent while it hands them over.
   */
  follow?: boolean
  /** Read only these partitions of the two topics (a loader's share); default every partition. */
  partitions?: readonly TablePartition[]
  /**
   * A local checkpoint of the tables (INGEST_STATE_DIR): restored at start
   * when it still describes the topics (then only what came since is read),
   * written once caught up, every `intervalMs` while the table moves, and at stop.
   */
  checkpoint?: TableCheckpointConfig
  /**
   * Writer schemas by id (AvroSerde.writerType). With it, records written
   * with the table's own schema go from their Avro bytes straight into the
   * table (AvroTableWriter); without it, or for other writer schemas, each
   * record is decoded by its codec and encoded.
   */
  writerType?: (schemaId: number) => Promise<avro.Type>
}


export const TABLE_CHECK = 'table'

/**
 * Feeds the local shop and merchant tables from the compacted topics.
 *
 * Every instance needs ALL partitions of both topics, so this is not a member of
 * the service's group: a TopicReader (@platformatic/kafka, no consumer group)
 * reads them from the beginning, read-committed (only what the refresher
 * committed), applying records in offset order; a null value (tombstone)
 * deletes the entry.
 *
 * "Caught up" means: every partition has been read up to the end offset it had
 * when the reader started. Until then the readiness check `table` is false.
 */
export class TableReader {
  readonly #options: TableReaderOptions
  #reader: TopicReader | undefined
  #stopped = false
  #done = false
  #caughtUp: Promise<void>
  #resolveCaughtUp: () => void = () => {}
  /** `${topic}:${partition}` → offset after the last applied record (or marker). */
  readonly #positions = new Map<string, bigint>()
  readonly #loaderProcesses = new Set<ChildProcess>()
  readonly #checkpointer: TableCheckpointer | undefined
  #checkpointTimer: NodeJS.Timeout | undefined
  #restored = false
  /** Aborted by stop(): ends a wait for the cluster at start. */
  readonly #stopping = new AbortController()
  /** Batches being applied, and the wait of a checkpoint for them to finish. */
  #applying = 0
  #idle: (() => void) | undefined
  #quiet: Promise<void> | undefined
  readonly #fast: AvroTableWriter | undefined

  constructor(options: TableReaderOptions) {
    this.#options = options
    this.#caughtUp = new Promise((resolve) => {
      this.#resolveCaughtUp = resolve
    })
    options.readiness?.register(TABLE_CHECK, 'reading the compacted shop and merchant topics')
    this.#fast = options.writerType === undefined ? undefined : new AvroTableWriter(options.writerType)
    if (options.checkpoint !== undefined)
      this.#checkpointer = new TableCheckpointer({
        config: options.checkpoint,
        kafka: options.kafka,
        tables: options.tables,
        shopsTopic: options.shops.topic,
        merchantsTopic: options.merchants.topic,
        ...(options.logger === undefined ? {} : { logger: options.logger }),
        onWaiting: (reason) => options.readiness?.set(TABLE_CHECK, false, reason),
      })
  }

  /** Whether the tables came from the checkpoint (not a load from the beginning of the topics). */
  get restoredFromCheckpoint(): boolean {
    return this.#restored
  }

  /**
   * Writes a checkpoint now (if configured, caught up, and the table moved
   * since the last one); resolves whether a file was written.
   */
  async saveCheckpoint(): Promise<boolean> {
    if (this.#checkpointer === undefined || !this.#done) return false
    return this.#checkpointer.save(
      () => this.positions(),
      (fn) => this.#whileQuiet(fn),
    )
  }

  /** Resolves once the tables hold everything the topics had at start. */
  whenCaughtUp(): Promise<void> {
    return this.#caughtUp
  }

  get caughtUp(): boolean {
    return this.#done
  }

  /** Where reading continues, per partition read so far. */
  positions(): TablePositions {
    const out: TablePositions = {}
    for (const [key, offset] of this.#positions) out[key] = offset.toString()
    return out
  }

  async start(): Promise<void> {
    const { kafka, shops, merchants, logger } = this.#options
    if (this.#checkpointer !== undefined) {
      this.#options.readiness?.set(TABLE_CHECK, false, 'reading the table checkpoint')
      const positions = await this.#checkpointer.restore(this.#stopping.signal)
      if (positions !== undefined) {
        for (const [key, offset] of positions) this.#positions.set(key, offset)
        this.#restored = true
        // The pools' JSON and its parse are garbage now, as after a hand-over.
        collectLoadGarbage(logger)
      }
      if (this.#stopped) return
    }
    if (this.#options.loader !== undefined && !this.#restored) {
      // The loader caught up to the end offsets it saw; this process then only
      // follows what was written since, from where the loader stopped.
      await this.#loadInChildProcess(this.#options.loader)
      collectLoadGarbage(logger)
      if (this.#stopped) return
    }
    const follow = this.#options.follow ?? true
    const reader = new TopicReader({
      kafka,
      topics: [shops.topic, merchants.topic],
      positions: this.#positions,
      ...(this.#options.partitions === undefined ? {} : { partitions: this.#options.partitions }),
      follow,
      ...(this.#options.consumer?.maxWaitTimeInMs === undefined ? {} : { maxWaitMs: this.#options.consumer.maxWaitTimeInMs }),
      ...(this.#options.fetch?.maxBytesPerPartition === undefined
        ? {}
        : { maxBytesPerPartition: this.#options.fetch.maxBytesPerPartition }),
      ...(this.#options.fetch?.maxBytes === undefined ? {} : { maxBytes: this.#options.fetch.maxBytes }),
      ...(logger === undefined ? {} : { logger }),
      onRecords: (batch) => this.#applyBatch(batch),
      onRetry: (err) => {
        const reason = err instanceof Error ? err.message : String(err)
        if (!reader.caughtUp) this.#options.readiness?.set(TABLE_CHECK, false, `reading the topics failed, retrying: ${reason}`)
      },
    })
    this.#reader = reader
    await reader.start()
    this.#setBehind(reader.behind)
    logger?.info({ partitionsToCatchUp: reader.behind, follow }, 'table reader started')
    void reader.whenCaughtUp().then(() => {
      this.#checkDone()
      this.#startCheckpoints()
    })
    reader.done().catch((err: unknown) => {
      if (this.#stopped) return
      logger?.error({ err }, 'table reader stopped after an error')
      // The table would silently stop following the refresher: the instance says so.
      const reason = err instanceof Error ? err.message : String(err)
      this.#options.readiness?.set(TABLE_CHECK, false, `table reader stopped after an error: ${reason}`)
      this.#options.onFatal?.(err)
    })
  }

  async stop(): Promise<void> {
    this.#stopped = true
    this.#stopping.abort()
    for (const child of this.#loaderProcesses) child.kill()
    await this.#reader?.stop()
    if (this.#checkpointTimer !== undefined) clearInterval(this.#checkpointTimer)
    // A clean stop leaves the newest checkpoint behind: the next start replays nothing.
    await this.saveCheckpoint()
  }

  /** The first checkpoint once caught up (a restart after a crash then replays little), then one per interval. */
  #startCheckpoints(): void {
    const checkpointer = this.#checkpointer
    if (checkpointer === undefined || this.#stopped) return
    // The pools' JSON and the clients of the write are garbage afterwards: given back at once, as after a load.
    void this.saveCheckpoint().then((written) => {
      if (written && !this.#stopped) collectLoadGarbage(this.#options.logger)
    })
    this.#checkpointTimer = setInterval(() => void this.saveCheckpoint(), checkpointer.intervalMs)
    this.#checkpointTimer.unref()
  }

  /** Runs `fn` while no batch is being applied (none starts until it settles). */
  async #whileQuiet<T>(fn: () => Promise<T>): Promise<T> {
    while (this.#quiet !== undefined) await this.#quiet
    let release = (): void => {}
    this.#quiet = new Promise((resolve) => (release = resolve))
    try {
      if (this.#applying > 0) await new Promise<void>((resolve) => (this.#idle = resolve))
      return await fn()
    } finally {
      this.#quiet = undefined
      release()
    }
  }

  /** Applies one partition's records in offset order; a tombstone deletes the entry. */
  async #applyBatch(batch: ReadBatch): Promise<void> {
    while (this.#quiet !== undefined) await this.#quiet
    this.#applying++
    try {
      await this.#applyRecords(batch)
    } finally {
      this.#applying--
      if (this.#applying === 0 && this.#idle !== undefined) {
        this.#idle()
        this.#idle = undefined
      }
    }
  }

  async #applyRecords(batch: ReadBatch): Promise<void> {
    const { shops, merchants } = this.#options
    const isShop = batch.topic === shops.topic
    for (const record of batch.records) {
      if (this.#stopped) return
      const key = record.key
      if (key !== null && key !== undefined && key.length > 0 && this.#fast !== undefined && record.value !== null) {
        // No await unless a writer schema is looked up: a microtask per record is measurable at millions.
        let handled = this.#applyFast(isShop, key, record.value, batch.topic)
        if (typeof handled !== 'boolean') handled = await handled
        if (handled) continue
      }
      const uid = key?.toString('utf8')
      if (uid === undefined || uid === '')
        this.#options.onSkipped?.(batch.topic, new Error(`record at offset ${record.offset} has no key`))
      else if (isShop) await this.#apply('SHOP', uid, record.value, shops.codec, batch.topic)
      else await this.#apply('MERCHANT', uid, record.value, merchants.codec, batch.topic)
    }
    this.#positions.set(`${batch.topic}:${batch.partition}`, batch.nextOffset)
    if (!this.#done && this.#reader !== undefined) this.#setBehind(this.#reader.behind)
  }

  /** The fast path (see `writerType`); false when the record must take the codec's. */
  #applyFast(isShop: boolean, key: Buffer, value: Buffer, topic: string): boolean | Promise<boolean> {
    const fast = this.#fast!
    const table = isShop ? this.#options.tables.shops : this.#options.tables.merchants
    const outcome = fast.apply(table, key, value)
    if (outcome !== 'unknown-schema') return this.#finishFast(isShop, key, topic, outcome)
    return fast.learn(table, value).then(() => this.#finishFast(isShop, key, topic, fast.apply(table, key, value)))
  }

  /** Reports a fast-path outcome; false when the record must take the codec's path. */
  #finishFast(isShop: boolean, key: Buffer, topic: string, outcome: ReturnType<AvroTableWriter['apply']>): boolean {
    if (outcome === 'key-mismatch')
      this.#options.onSkipped?.(topic, new Error(`record key ${key.toString('utf8')} differs from the uid in its value`))
    else if (typeof outcome === 'object') {
      // The uid as a string only for a listener (the serving process; a loader has none).
      if (this.#options.onApplied !== undefined) this.#options.onApplied(isShop ? 'SHOP' : 'MERCHANT', key.toString('utf8'), outcome.applied)
    } else return false
    return true
  }

  /** Runs the catch-up in loader processes and takes over their tables (one shard each) and positions. */
  async #loadInChildProcess(loader: TableLoaderConfig): Promise<void> {
    const { shops, merchants, logger } = this.#options
    this.#options.readiness?.set(TABLE_CHECK, false, 'reading the table topics\' offsets to plan the load')
    const started = Date.now()
    const shares = await planLoaderSharesOf({
      kafka: this.#options.kafka,
      topics: [shops.topic, merchants.topic],
      maxProcesses: loader.processes ?? defaultLoaderProcesses(),
      ...(loader.minRecordsPerProcess === undefined ? {} : { minRecordsPerProcess: loader.minRecordsPerProcess }),
      ...(logger === undefined ? {} : { logger }),
    })
    if (this.#stopped) return
    const processes = shares?.length ?? 1
    this.#options.readiness?.set(TABLE_CHECK, false, `catching up in ${processes === 1 ? 'the table loader process' : `${processes} table loader processes`}`)
    if (shares !== undefined)
      logger?.info({ loaderProcesses: processes, partitionsPerProcess: shares.map((share) => share.length) }, 'table load split by partition over loader processes')
    const loaded = await loadInChildProcesses({
      loader,
      shopsTopic: shops.topic,
      merchantsTopic: merchants.topic,
      ...(this.#options.consumer === undefined ? {} : { consumer: this.#options.consumer }),
      ...(logger === undefined ? {} : { logger }),
      onSkipped: (topic, error) => this.#options.onSkipped?.(topic, error),
      onChild: (child, running) => {
        if (running) this.#loaderProcesses.add(child)
        else this.#loaderProcesses.delete(child)
      },
      stopped: () => this.#stopped,
      ...(shares === undefined ? {} : { shares }),
    })
    if (loaded === undefined) return
    // The hand-over read every buffer into one allocated for these tables: adopted, not copied.
    this.#options.tables.restoreState(loaded.states, true)
    for (const [key, offset] of Object.entries(loaded.positions)) this.#positions.set(key, BigInt(offset))
    logger?.info(
      {
        shops: this.#options.tables.shops.size,
        merchants: this.#options.tables.merchants.size,
        loaderProcesses: loaded.states.length,
        shards: this.#options.tables.shops.shards,
        loadMs: Date.now() - started,
      },
      `table loaded by ${processes === 1 ? 'the loader process' : `${processes} loader processes`}; following the topics from their positions`,
    )
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

  #setBehind(behind: number): void {
    if (behind > 0)
      this.#options.readiness?.set(TABLE_CHECK, false, `catching up: ${behind} partition(s) behind their start end offset`)
  }

  #checkDone(): void {
    if (this.#done || this.#stopped) return
    this.#done = true
    const { tables } = this.#options
    this.#options.readiness?.set(
      TABLE_CHECK,
      true,
      `caught up: ${tables.shops.size} shops, ${tables.merchants.size} merchants`,
    )
    this.#resolveCaughtUp()
  }
}
