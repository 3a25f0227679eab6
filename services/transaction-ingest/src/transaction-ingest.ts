import { CORRECTION_HEADER } from '@tep/schemas'
import { hostname } from 'node:os'
import { errorCode, isRetriable } from '@tep/errors'
import {
  AvroSerde,
  createTransactionalPipeline,
  OffsetReader,
  TOPICS,
  type KafkaLogger,
  type RetryPolicy,
  type TransactionalPipeline,
  type Kafka,
} from '@tep/kafka'
import {
  createMetricsRegistry,
  Gauge,
  Readiness,
  type ContractDriftListener,
  type Registry,
} from '@tep/observability'
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry'
import type { EnrichmentPort } from './enrichment-port.ts'
import { Enricher } from './enricher.ts'
import { BATCH_MODE_CONCURRENCY } from './inflight-budget.ts'
import { createIngestCodecs, recordTransform } from './record-transform.ts'
import { Lookups, type CompleteLookups, type LookupMode } from './lookups.ts'
import { MerchantDetails } from './merchant-details.ts'
import { createIngestMetrics, type IngestMetrics } from './metrics.ts'
import { OutcomeTracker } from './outcome-tracker.ts'
import { createMerchantTables, type MerchantTables } from './snapshot-table.ts'
import { TableReader, type TableLoaderConfig } from './table-reader.ts'
import type { TableCheckpointConfig } from './table-checkpointer.ts'

export interface IngestTopics {
  input: string
  enriched: string
  dlq: string
  fetched: string
  shops: string
  merchants: string
}

export const DEFAULT_TOPICS: Readonly<IngestTopics> = Object.freeze({
  input: TOPICS.transactionsRaw,
  enriched: TOPICS.transactionsEnriched,
  dlq: TOPICS.transactionsDlq,
  fetched: TOPICS.merchantFetched,
  shops: TOPICS.merchantShops,
  merchants: TOPICS.merchantMerchants,
})

export interface TransactionIngestOptions {
  kafka: Kafka
  schemaRegistry: SchemaRegistry
  /** The enrichment API client (an EnrichmentClient of @tep/enrichment-client). */
  client: EnrichmentPort
  topics?: Partial<IngestTopics>
  lookupMode?: LookupMode
  /** Entries per batch call (1..500); default 500. */
  batchMax?: number
  /** When card lookups use the `complete` variants; default `auto` (while the table is cold). */
  completeLookups?: CompleteLookups
  /** Linger of a partly filled batch, ms; default 5. */
  batchLingerMs?: number
  /** When a lookup variant found missing (404/405/501) is tried again, ms; default 10 min. */
  lookupReprobeMs?: number
  /** Told of the lookup variants found missing (tep_api_contract_drift_total); pass the client's listener too. */
  onContractDrift?: ContractDriftListener
  /**
   * Records of one partition in flight; default BATCH_MODE_CONCURRENCY (500). The
   * service's run.ts picks it by lookup mode when INGEST_CONCURRENCY is unset (inflight-budget.ts).
   */
  concurrency?: number
  /** Partitions processed at once; default 4. */
  partitionsConcurrently?: number
  /**
   * Input records per Kafka transaction; default 3,000, below the loop's 10,000: the
   * ingest's transactions never fill that under its own CPU per record (about 1,000 records
   * finish during one commit), and the cap also bounds what the loop fetches ahead,
   * which in the ingest is garbage the collector copies.
   */
  maxRecordsPerTransaction?: number
  /** Default true. False: table entries older than 7 days are misses (spec limit 4). */
  invalidationsEnabled?: boolean
  groupId?: string
  transactionalIdPrefix?: string
  /** Default `<hostname>-<pid>`. */
  instanceId?: string
  /** Backoff of the pipeline after a systemic failure. */
  retryPolicy?: Partial<RetryPolicy>
  /** Consumer timings (tests use shorter ones). */
  consumer?: {
    sessionTimeout?: number
    heartbeatInterval?: number
    maxWaitTimeInMs?: number
    rebalanceTimeout?: number
  }
  /**
   * Load the shop/merchant table in a child process (its garbage leaves with the
   * process; see TableReader). Without it the table loads on this thread.
   */
  tableLoader?: TableLoaderConfig
  /**
   * Local checkpoint of the table (INGEST_STATE_DIR): a restart reads it and
   * replays only what the topics got since, instead of loading them whole.
   */
  tableCheckpoint?: TableCheckpointConfig
  /**
   * Records of the table's own schema go from their Avro bytes straight into
   * the table (default true); false: all through avsc objects (INGEST_TABLE_TRANSCODE).
   */
  tableTranscode?: boolean
  /** How often the input lag gauge is refreshed, ms; default 10 000. */
  lagIntervalMs?: number
  /** How long stop() lets in-flight API calls finish before aborting them, ms; default 5 000. */
  stopGraceMs?: number
  /**
   * Called when the pipeline crashed in a way it does not recover from in place
   * (its loop failed): the process should end so that its supervisor starts a new one.
   */
  onFatal?: (error: unknown) => void
  logger?: KafkaLogger
  metricsRegistry?: Registry
  readiness?: Readiness
  now?: () => number
}

export interface TransactionIngest {
  readonly readiness: Readiness
  readonly metricsRegistry: Registry
  readonly metrics: IngestMetrics
  readonly tables: MerchantTables
  readonly topics: IngestTopics
  /** Whether the table came from the checkpoint (tableCheckpoint) rather than a load of the whole topics. */
  readonly tableFromCheckpoint: boolean
  /** The pipeline's view: state, assigned and paused partitions. */
  status(): ReturnType<TransactionalPipeline['status']>
  /** Stops consuming (in-flight work commits or aborts), then every client. Idempotent. */
  stop(): Promise<void>
}

export const CONSUMER_CHECK = 'consumer'
export { CORRECTION_HEADER }

/**
 * Starts one ingest instance in-process: loads the shop/merchant table from the
 * compacted topics (ready once caught up), then runs the transactional
 * consume-enrich-produce pipeline from the raw topic. Resolves once consuming.
 */
export async function startTransactionIngest(options: TransactionIngestOptions): Promise<TransactionIngest> {
  const topics: IngestTopics = { ...DEFAULT_TOPICS, ...options.topics }
  const logger = options.logger
  const now = options.now ?? Date.now
  const instanceId = options.instanceId ?? `${hostname()}-${process.pid}`
  const groupId = options.groupId ?? 'transaction-ingest'
  const readiness = options.readiness ?? new Readiness()
  const metricsRegistry = options.metricsRegistry ?? createMetricsRegistry({ service: 'transaction-ingest' })
  const metrics = createIngestMetrics(metricsRegistry)
  // Exposed at 0 from the start: an alert on its increase needs the series before the first skip.
  metrics.inputSkipped.inc({ topic: topics.input }, 0)
  readiness.register(CONSUMER_CHECK, 'waiting for the table before consuming')

  const serde = new AvroSerde({
    registry: options.schemaRegistry,
    ...(logger === undefined ? {} : { logger }),
  })
  const codecs = await createIngestCodecs(serde, topics)

  const tables = createMerchantTables({ invalidationsEnabled: options.invalidationsEnabled ?? true, now })
  registerTableGauges(metricsRegistry, tables)

  // API calls of this instance stop waiting when stop() gives up on them.
  const apiAbort = new AbortController()
  const client = withSignal(options.client, apiAbort.signal)
  const details = new MerchantDetails({ tables, client, instanceId, metrics, now, tableHitsAsAvro: true })
  const lookups = new Lookups({
    client,
    mode: options.lookupMode ?? 'batch',
    batchMax: options.batchMax ?? 500,
    lingerMs: options.batchLingerMs ?? 5,
    complete: options.completeLookups ?? 'auto',
    tableIsCold: () => details.tableIsCold(),
    metrics,
    now,
    ...(options.lookupReprobeMs === undefined ? {} : { reprobeMs: options.lookupReprobeMs }),
    ...(options.onContractDrift === undefined ? {} : { onContractDrift: options.onContractDrift }),
  })
  const enricher = new Enricher({ lookups, details, now, onMasked: (path, n) => metrics.panMasked.inc({ path }, n) })

  const tableReader = new TableReader({
    kafka: options.kafka,
    tables,
    shops: { topic: topics.shops, codec: serde.topic(topics.shops, 'Shop') },
    merchants: { topic: topics.merchants, codec: serde.topic(topics.merchants, 'Merchant') },
    readiness,
    ...(logger === undefined ? {} : { logger }),
    ...(options.consumer === undefined ? {} : { consumer: options.consumer }),
    ...(options.tableLoader === undefined ? {} : { loader: options.tableLoader }),
    ...(options.tableCheckpoint === undefined ? {} : { checkpoint: options.tableCheckpoint }),
    ...(options.tableTranscode === false ? {} : { writerType: (schemaId: number) => serde.writerType(schemaId) }),
    onApplied: (entity, uid, fetchedAt) => details.confirm(entity, uid, fetchedAt),
    onSkipped: (topic, err) =>
      logger?.error({ err, topic }, 'table record skipped: it does not decode as its schema'),
  })

  let stopping: Promise<void> | undefined
  const outcomes = new OutcomeTracker()
  const paused = new Map<string, string>()
  /** Why the consumer is not consuming while the pipeline re-creates it. */
  let consumerDown: string | undefined
  const updateConsumerCheck = (): void => {
    if (consumerDown !== undefined) readiness.set(CONSUMER_CHECK, false, consumerDown)
    else if (paused.size === 0) readiness.set(CONSUMER_CHECK, true, 'consuming')
    else
      readiness.set(CONSUMER_CHECK, false, `paused by a systemic failure: ${[...paused.values()].join('; ')}`)
  }

  const transform = recordTransform({ codecs, enricher, outcomes, metrics, topics })

  const pipeline = createTransactionalPipeline({
    kafka: options.kafka,
    groupId,
    topics: [topics.input],
    transactionalIdPrefix: options.transactionalIdPrefix ?? 'transaction-ingest',
    // One transactional producer per instance on @platformatic/kafka: a restart with the same name aborts its predecessor's open transaction at once.
    instanceId,
    transform,
    dlqTopic: topics.dlq,
    // A raw record that decoded (and failed later) is masked field by field on the DLQ.
    dlqValueSchema: (schemaId) => serde.knownWriterType(schemaId),
    concurrency: options.concurrency ?? BATCH_MODE_CONCURRENCY,
    partitionsConsumedConcurrently: options.partitionsConcurrently ?? 4,
    maxRecordsPerTransaction: options.maxRecordsPerTransaction ?? 3_000,
    ...(options.retryPolicy === undefined ? {} : { retryPolicy: options.retryPolicy }),
    ...(options.consumer === undefined ? {} : { consumer: options.consumer }),
    ...(logger === undefined ? {} : { logger }),
    hooks: {
      onCommitted: (e) => {
        const counts = outcomes.committed(e.topic, e.partition, e.lastOffset)
        for (const [status, n] of counts.byStatus) metrics.recordsOut.inc({ outcome: status }, n)
        if (counts.fetchedShops > 0) metrics.fetchedPublished.inc({ entity: 'SHOP' }, counts.fetchedShops)
        if (counts.fetchedMerchants > 0)
          metrics.fetchedPublished.inc({ entity: 'MERCHANT' }, counts.fetchedMerchants)
        if (paused.delete(`${e.topic}/${e.partition}`)) {
          logger?.info(
            { topic: e.topic, partition: e.partition },
            'partition recovered from a systemic failure',
          )
          updateConsumerCheck()
        }
      },
      onDeadLettered: (e) => {
        metrics.recordsOut.inc({ outcome: 'DLQ' })
        if (e.maskedPans > 0) metrics.panMasked.inc({ path: 'dlq' }, e.maskedPans)
      },
      onPaused: (e) => {
        metrics.pauses.inc({ reason: e.code })
        metrics.retries.inc()
        const message = e.error instanceof Error ? e.error.message : String(e.error)
        paused.set(
          `${e.topic}/${e.partition}`,
          `${e.topic}/${e.partition} ${e.code} (attempt ${e.attempt}, retry in ${e.delayMs} ms): ${message}`,
        )
        updateConsumerCheck()
      },
      onCrash: (e) => {
        if (stopping !== undefined) return
        const reason = e.error instanceof Error ? e.error.message : String(e.error)
        if (e.restart) {
          // The pipeline replaces the consumer itself; readiness says so until it consumes again.
          metrics.consumerRecoveries.inc()
          consumerDown = `Kafka consumer being re-created after: ${reason}`
          updateConsumerCheck()
          return
        }
        // The loop itself crashed and consumes nothing any more: an instance that stays alive
        // idle is never restarted by its supervisor, so it asks to end.
        readiness.set(CONSUMER_CHECK, false, `consumer stopped after an error: ${reason}`)
        options.onFatal?.(e.error)
      },
      onOffsetOutOfRange: (e) => {
        // Logged by the loop as an error with the offsets; counted here for the alert.
        if (e.skippedOffsets > 0) metrics.inputSkipped.inc({ topic: e.topic }, e.skippedOffsets)
      },
      onRecovered: () => {
        consumerDown = undefined
        updateConsumerCheck()
      },
      onAssigned: (e) => {
        outcomes.retain(e.partitions)
        for (const key of [...paused.keys()])
          if (!e.partitions.some((tp) => `${tp.topic}/${tp.partition}` === key)) paused.delete(key)
        updateConsumerCheck()
      },
    },
  })
  new Gauge({
    name: 'ingest_partitions_paused',
    help: 'Input partitions currently paused by a systemic failure',
    registers: [metricsRegistry],
    collect() {
      this.set(paused.size)
    },
  })

  let lagMonitor: LagMonitor | undefined
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const grace = options.stopGraceMs ?? 5_000
      const pipelineStopped = pipeline.stop()
      lookups.flush()
      const timer = setTimeout(() => apiAbort.abort(new Error('transaction-ingest is stopping')), grace)
      timer.unref()
      try {
        await pipelineStopped
      } finally {
        clearTimeout(timer)
        apiAbort.abort(new Error('transaction-ingest stopped'))
      }
      await lagMonitor?.stop()
      await tableReader.stop()
      readiness.set(CONSUMER_CHECK, false, 'stopped')
    })()
    return stopping
  }

  try {
    await tableReader.start()
    await tableReader.whenCaughtUp()
    logger?.info(
      { shops: tables.shops.size, merchants: tables.merchants.size },
      'table caught up; starting the pipeline',
    )
    await pipeline.start()
    updateConsumerCheck()
    lagMonitor = new LagMonitor(
      new OffsetReader(options.kafka),
      groupId,
      topics.input,
      metrics,
      options.lagIntervalMs ?? 10_000,
      logger,
    )
    await lagMonitor.start()
  } catch (err) {
    await stop().catch(() => undefined)
    throw err
  }

  return {
    readiness,
    metricsRegistry,
    metrics,
    tables,
    topics,
    tableFromCheckpoint: tableReader.restoredFromCheckpoint,
    status: () => pipeline.status(),
    stop,
  }
}

function registerTableGauges(registry: Registry, tables: MerchantTables): void {
  new Gauge({
    name: 'ingest_table_entries',
    help: 'Entries in the local shop/merchant table',
    labelNames: ['table'],
    registers: [registry],
    collect() {
      this.set({ table: 'shops' }, tables.shops.size)
      this.set({ table: 'merchants' }, tables.merchants.size)
    },
  })
  new Gauge({
    name: 'ingest_table_bytes',
    help: 'Bytes held by the local table (arena chunks and hash index)',
    labelNames: ['table'],
    registers: [registry],
    collect() {
      this.set({ table: 'shops' }, tables.shops.memoryBytes)
      this.set({ table: 'merchants' }, tables.merchants.memoryBytes)
    },
  })
}

/**
 * Batch lookups and shop/merchant reads get the instance's abort signal, so that
 * stop() can cut them short after its grace period. Per-record lookups (single
 * mode, transfers) do not: thousands of concurrent requests each adding and
 * removing a listener on one shared signal cost measurable CPU on the hot path
 * (EventTarget keeps listeners in a list); at stop they end within the request
 * timeout instead.
 */
function withSignal(client: EnrichmentPort, signal: AbortSignal): EnrichmentPort {
  const options = { signal }
  return {
    findByCardTransaction: (input) => client.findByCardTransaction(input),
    findByCardTransactionBatch: (inputs) => client.findByCardTransactionBatch(inputs, options),
    completeFindByCardTransaction: (input) => client.completeFindByCardTransaction(input),
    completeFindByCardTransactionBatch: (inputs) =>
      client.completeFindByCardTransactionBatch(inputs, options),
    findByBankTransfer: (scheme, input) => client.findByBankTransfer(scheme, input),
    getShop: (uid) => client.getShop(uid, options),
    getMerchant: (uid) => client.getMerchant(uid, options),
  }
}

/**
 * Lag of the group on the input topic from committed offsets (what survives a
 * crash), refreshed on an interval rather than per scrape so /metrics stays cheap.
 */
class LagMonitor {
  readonly #offsets: OffsetReader
  readonly #groupId: string
  readonly #topic: string
  readonly #metrics: IngestMetrics
  readonly #intervalMs: number
  readonly #logger: KafkaLogger | undefined
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined

  constructor(
    offsets: OffsetReader,
    groupId: string,
    topic: string,
    metrics: IngestMetrics,
    intervalMs: number,
    logger: KafkaLogger | undefined,
  ) {
    this.#offsets = offsets
    this.#groupId = groupId
    this.#topic = topic
    this.#metrics = metrics
    this.#intervalMs = intervalMs
    this.#logger = logger
  }

  async start(): Promise<void> {
    await this.#refresh()
    this.#timer = setInterval(() => {
      this.#running ??= this.#refresh().finally(() => {
        this.#running = undefined
      })
    }, this.#intervalMs)
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    await this.#running
    await this.#offsets.close()
  }

  async #refresh(): Promise<void> {
    try {
      const [ends, committed] = await Promise.all([
        this.#offsets.topicOffsets(this.#topic),
        this.#offsets.committedOffsets(this.#groupId, this.#topic),
      ])
      for (const end of ends) {
        const from = committed.get(end.partition) ?? end.low
        const lag = end.high - from
        this.#metrics.consumerLag.set(
          { topic: this.#topic, partition: String(end.partition) },
          Number(lag < 0n ? 0n : lag),
        )
      }
    } catch (err) {
      this.#logger?.debug({ err: errorCode(err), retriable: isRetriable(err) }, 'consumer lag refresh failed')
    }
  }
}
