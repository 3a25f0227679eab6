import { fork, type ChildProcess } from 'node:child_process'
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { isRetriable } from '@tep/errors'
import { TopicReader, type KafkaLogger, type ReadBatch, type TopicCodec, type Kafka } from '@tep/kafka'
import type { Merchant, Shop } from '@tep/schemas'
import type { Readiness } from '@tep/observability'
import type avro from 'avsc'
import { AvroTableWriter } from './avro-table-writer.ts'
import { CompactTable } from './compact-table.ts'
import { TableLoadError } from './errors.ts'
import type { MerchantTables, MerchantTablesState } from './snapshot-table.ts'
import { TableCheckpointer, type TableCheckpointConfig } from './table-checkpointer.ts'

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
  consumer?: { sessionTimeout?: number; heartbeatInterval?: number; maxWaitTimeInMs?: number }
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

/**
 * How the loader process reaches Kafka and the registry. Loading a million
 * records through KafkaJS leaves a large young generation, pooled V8 pages and
 * malloc'd fetch buffers behind that a process keeps (a worker thread's too);
 * a child process gives them all back when it exits, and only the finished
 * table (its arena bytes, index and string pools) comes over.
 */
export interface TableLoaderConfig {
  brokers: string[]
  clientId: string
  registryUrl: string
  /** Whether the loader transcodes records of the table's own schema (TableReaderOptions.writerType); default true. */
  transcode?: boolean
  /** KafkaJS fetch limits during the load; smaller fetches keep the loader's peak lower. */
  maxBytesPerPartition?: number
  maxBytes?: number
}

/** Next offset to read per `${topic}:${partition}` (only partitions with applied records). */
export type TablePositions = Record<string, string>

/** What the loader process sends its parent. */
export type TableLoaderMessage =
  | { type: 'loaded'; state: MerchantTablesState; files: TableLoaderFiles; positions: TablePositions }
  | { type: 'skipped'; topic: string; error: unknown }
  | { type: 'log'; level: 'debug' | 'info' | 'warn' | 'error'; obj: object; msg?: string }

/** Files the loader wrote the bulk of the state to (arena chunks in order, index arrays, pools as JSON). */
export interface TableLoaderFiles {
  shops: string[]
  merchants: string[]
  shopsSlots?: string
  shopsHashes?: string
  merchantsSlots?: string
  merchantsHashes?: string
  pools?: string
}

/** What the parent sends the loader process first. */
export interface TableLoaderData {
  /** Directory (made and removed by the parent) for the state's files. */
  spoolDir: string
  loader: TableLoaderConfig
  shopsTopic: string
  merchantsTopic: string
  consumer?: TableReaderOptions['consumer']
}

const LOADER_PATH = new URL('./table-loader-process.ts', import.meta.url)

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
  #loaderProcess: ChildProcess | undefined
  readonly #checkpointer: TableCheckpointer | undefined
  #checkpointTimer: NodeJS.Timeout | undefined
  #restored = false
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
      const positions = await this.#checkpointer.restore()
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
    this.#loaderProcess?.kill()
    await this.#reader?.stop()
    if (this.#checkpointTimer !== undefined) clearInterval(this.#checkpointTimer)
    // A clean stop leaves the newest checkpoint behind: the next start replays nothing.
    await this.saveCheckpoint()
  }

  /** The first checkpoint once caught up (a restart after a crash then replays little), then one per interval. */
  #startCheckpoints(): void {
    const checkpointer = this.#checkpointer
    if (checkpointer === undefined || this.#stopped) return
    void this.saveCheckpoint()
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
      const uid = record.key?.toString('utf8')
      if (uid !== undefined && uid !== '' && this.#fast !== undefined && record.value !== null) {
        // No await unless a writer schema is looked up: a microtask per record is measurable at millions.
        let handled = this.#applyFast(isShop, uid, record.key!, record.value, batch.topic)
        if (typeof handled !== 'boolean') handled = await handled
        if (handled) continue
      }
      if (uid === undefined || uid === '')
        this.#options.onSkipped?.(batch.topic, new Error(`record at offset ${record.offset} has no key`))
      else if (isShop) await this.#apply('SHOP', uid, record.value, shops.codec, batch.topic)
      else await this.#apply('MERCHANT', uid, record.value, merchants.codec, batch.topic)
    }
    this.#positions.set(`${batch.topic}:${batch.partition}`, batch.nextOffset)
    if (!this.#done && this.#reader !== undefined) this.#setBehind(this.#reader.behind)
  }

  /** The fast path (see `writerType`); false when the record must take the codec's. */
  #applyFast(isShop: boolean, uid: string, key: Buffer, value: Buffer, topic: string): boolean | Promise<boolean> {
    const fast = this.#fast!
    const table = isShop ? this.#options.tables.shops : this.#options.tables.merchants
    const entity = isShop ? 'SHOP' : 'MERCHANT'
    const finish = (outcome: ReturnType<AvroTableWriter['apply']>): boolean => {
      if (outcome === 'key-mismatch')
        this.#options.onSkipped?.(topic, new Error(`record key ${uid} differs from the uid in its value`))
      else if (typeof outcome === 'object') this.#options.onApplied?.(entity, uid, outcome.applied)
      else return false
      return true
    }
    const outcome = fast.apply(table, uid, key, value)
    if (outcome !== 'unknown-schema') return finish(outcome)
    return fast.learn(table, value).then(() => finish(fast.apply(table, uid, key, value)))
  }

  /** Runs the catch-up in a child process and takes over its tables and positions. */
  async #loadInChildProcess(loader: TableLoaderConfig): Promise<void> {
    this.#options.readiness?.set(TABLE_CHECK, false, 'catching up in the table loader process')
    const spoolDir = await mkdtemp(path.join(tmpdir(), 'tep-table-'))
    try {
      await this.#runLoader(loader, spoolDir)
    } finally {
      await rm(spoolDir, { recursive: true, force: true })
    }
  }

  async #runLoader(loader: TableLoaderConfig, spoolDir: string): Promise<void> {
    const { shops, merchants, logger } = this.#options
    const data: TableLoaderData = {
      spoolDir,
      loader,
      shopsTopic: shops.topic,
      merchantsTopic: merchants.topic,
      ...(this.#options.consumer === undefined ? {} : { consumer: this.#options.consumer }),
    }
    const started = Date.now()
    // No inherited execArgv (an --inspect port would clash); V8 structured
    // clone on the channel so skipped-record errors arrive as errors.
    const child = fork(LOADER_PATH, [], {
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    this.#loaderProcess = child
    const loaded = await new Promise<Extract<TableLoaderMessage, { type: 'loaded' }> | undefined>(
      (resolve, reject) => {
        let result: Extract<TableLoaderMessage, { type: 'loaded' }> | undefined
        child.on('message', (raw) => {
          const m = raw as TableLoaderMessage
          if (m.type === 'loaded') result = m
          else if (m.type === 'skipped') this.#options.onSkipped?.(m.topic, m.error)
          else logger?.[m.level]({ ...m.obj, process: 'table-loader' }, m.msg)
        })
        child.on('error', (err) =>
          reject(
            new TableLoadError(`the table loader process could not be run: ${err.message}`, { cause: err }),
          ),
        )
        // Waiting for the exit (not only the message) means its memory is gone before readiness.
        child.on('exit', (code, signal) => {
          if (result !== undefined || this.#stopped) resolve(result)
          else
            reject(
              new TableLoadError(
                `the table loader process exited (${signal ?? `code ${code}`}) before handing over the table; its log lines above say why`,
                { details: { code, signal } },
              ),
            )
        })
        child.send(data)
      },
    ).finally(() => {
      this.#loaderProcess = undefined
    })
    if (loaded === undefined) return
    const { state, files } = loaded
    for (const table of ['shops', 'merchants'] as const) {
      state[table].chunks = files[table].map((file) =>
        readInto(file, new ArrayBuffer(CompactTable.CHUNK_SIZE)),
      )
      const slots = files[`${table}Slots`]
      const hashes = files[`${table}Hashes`]
      if (slots === undefined || hashes === undefined)
        throw new TableLoadError(`the table loader handed over no index for the ${table} table`)
      state[table].slots = new Uint32Array(readInto(slots, new ArrayBuffer(fileSize(slots))))
      state[table].hashes = new Uint32Array(readInto(hashes, new ArrayBuffer(fileSize(hashes))))
    }
    if (files.pools === undefined) throw new TableLoadError('the table loader handed over no string pools')
    state.pools = JSON.parse(readFileSync(files.pools, 'utf8')) as MerchantTablesState['pools']
    this.#options.tables.restoreState(state)
    for (const [key, offset] of Object.entries(loaded.positions)) this.#positions.set(key, BigInt(offset))
    logger?.info(
      {
        shops: this.#options.tables.shops.size,
        merchants: this.#options.tables.merchants.size,
        loadMs: Date.now() - started,
      },
      'table loaded by the loader process; following the topics from its positions',
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

function fileSize(file: string): number {
  return statSync(file).size
}

/** Reads `file` into the start of `target` with no intermediate buffer. */
function readInto(file: string, target: ArrayBuffer): ArrayBuffer {
  const fd = openSync(file, 'r')
  try {
    const size = fstatSync(fd).size
    if (size > target.byteLength)
      throw new RangeError(`${file} is ${size} bytes, above the ${target.byteLength} expected`)
    const view = new Uint8Array(target)
    let done = 0
    while (done < size) {
      const n = readSync(fd, view, done, size - done, done)
      if (n === 0) throw new Error(`${file} ended after ${done} of ${size} bytes`)
      done += n
    }
  } finally {
    closeSync(fd)
  }
  return target
}

/**
 * One memory-reducing full GC right after the hand-over. The pools' JSON and
 * the parse leave ~50 MB of dead heap whose pages V8's memory reducer would
 * give back only after several quiet seconds; this gives them back before the
 * instance reports ready. It is `node --expose-gc`'s `gc()`, made reachable
 * for this one call, so the service needs no V8 flags to be started with.
 */
function collectLoadGarbage(logger: KafkaLogger | undefined): void {
  try {
    let gc = (globalThis as { gc?: unknown }).gc
    if (typeof gc !== 'function') {
      setFlagsFromString('--expose-gc')
      try {
        gc = runInNewContext('gc') as unknown
      } finally {
        setFlagsFromString('--no-expose-gc')
      }
    }
    if (typeof gc === 'function')
      (gc as (options: object) => void)({ type: 'major', execution: 'sync', flavor: 'last-resort' })
  } catch (err) {
    // Only an optimisation: the memory reducer frees the same pages a little later.
    logger?.warn({ err }, 'could not run a garbage collection after loading the table')
  }
}
