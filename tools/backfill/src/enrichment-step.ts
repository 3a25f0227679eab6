import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry'
import { createMetricsRegistry } from '@tep/observability'
import {
  AvroSerde,
  createTransactionalPipeline,
  isRecordFailure,
  type Kafka,
  type KafkaLogger,
  type OutputRecord,
  type PipelineHooks,
  type PipelineRecord,
  type TransactionalPipeline,
} from '@tep/kafka'
import type { BackfillMarker, RawTransaction } from '@tep/schemas'
import {
  createIngestMetrics,
  createMerchantTables,
  Enricher,
  Lookups,
  MerchantDetails,
  TableReader,
  type EnrichmentPort,
} from '@tep/transaction-ingest'
import type { LedgerEntry } from './backfill-topics.ts'
import type { StagedRow } from './file-loader.ts'
import { REJECT_CODES, rowToRaw, RowRejection, validateEvent } from './row-mapping.ts'

/** Topics the enrichment step reads and writes; the same as the live ingest's by default. */
export interface EnrichmentTopics {
  enriched: string
  fetched: string
  shops: string
  merchants: string
}

export interface EnricherSetup {
  enricher: Enricher
  serde: AvroSerde
  stop(): Promise<void>
}

/**
 * The live ingest's enrichment, built from its public parts the way
 * transaction-ingest wires them: the shop/merchant table loaded from the same
 * compacted topics (and kept following them), a findBy call for every row
 * (batched, never cached) and details from the table, the API on a miss.
 */
export async function startEnricher(options: {
  kafka: Kafka
  schemaRegistry: SchemaRegistry
  client: EnrichmentPort
  topics: EnrichmentTopics
  instanceId: string
  logger?: KafkaLogger
}): Promise<EnricherSetup> {
  const logger = options.logger
  const serde = new AvroSerde({ registry: options.schemaRegistry, ...(logger === undefined ? {} : { logger }) })
  const metrics = createIngestMetrics(createMetricsRegistry({ service: 'backfill', defaultMetrics: false }))
  const tables = createMerchantTables({ invalidationsEnabled: true })
  const details = new MerchantDetails({ tables, client: options.client, instanceId: options.instanceId, metrics })
  const lookups = new Lookups({
    client: options.client,
    mode: 'batch',
    batchMax: 500,
    lingerMs: 5,
    complete: 'auto',
    tableIsCold: () => details.tableIsCold(),
    metrics,
  })
  const enricher = new Enricher({ lookups, details })
  const tableReader = new TableReader({
    kafka: options.kafka,
    tables,
    shops: { topic: options.topics.shops, codec: serde.topic(options.topics.shops, 'Shop') },
    merchants: { topic: options.topics.merchants, codec: serde.topic(options.topics.merchants, 'Merchant') },
    ...(logger === undefined ? {} : { logger }),
    onApplied: (entity, uid, fetchedAt) => details.confirm(entity, uid, fetchedAt),
  })
  await tableReader.start()
  await tableReader.whenCaughtUp()
  return {
    enricher,
    serde,
    stop: async () => {
      lookups.flush()
      await tableReader.stop()
    },
  }
}

export type RowSource =
  | { kind: 'file'; topic: string }
  | { kind: 'topic'; topic: string; ends: Map<number, bigint> }

export interface EnrichmentStepOptions {
  kafka: Kafka
  setup: EnricherSetup
  source: RowSource
  topics: EnrichmentTopics & { ledger: string; dlq: string }
  marker: Omit<BackfillMarker, 'row'>
  groupId: string
  transactionalIdPrefix: string
  /** Rows of one partition in flight; default 500. */
  concurrency?: number
  partitionsConcurrently?: number
  consumer?: { sessionTimeout?: number; heartbeatInterval?: number; maxWaitTimeInMs?: number }
  hooks?: PipelineHooks
  /** A fetch offset the log no longer holds: read on from the log start, or hold the partition (TransactionalPipelineOptions). */
  offsetOutOfRange?: 'reset' | 'hold'
  logger?: KafkaLogger
}

/**
 * The second half of a backfill: the transactional pipeline of @tep/kafka over
 * the staged rows (or the raw topic's range). For every row, in ONE Kafka
 * transaction with the consumed offset: the enriched record (or nothing, for an
 * invalid row) and its ledger entry. A crash anywhere redoes only what was not
 * committed, so every row ends as exactly one enriched or rejected record.
 */
export function createEnrichmentStep(options: EnrichmentStepOptions): TransactionalPipeline {
  const { setup, source, topics, marker } = options
  const enrichedCodec = setup.serde.topic(topics.enriched, 'EnrichedTransaction')
  const fetchedCodec = setup.serde.topic(topics.fetched, 'MerchantDataFetched')
  const rawCodec = setup.serde.topic(source.topic, 'RawTransaction')
  let registered: Promise<unknown> | undefined

  const ledger = (entry: LedgerEntry): OutputRecord => ({
    topic: topics.ledger,
    key: entry.row,
    value: Buffer.from(JSON.stringify(entry)),
  })
  const invalid = (row: string, code: string, reason: string, transactionId: string | null): OutputRecord[] => [
    ledger({ row, outcome: 'INVALID', transactionId, code, reason }),
  ]

  const enrich = async (raw: RawTransaction, row: string): Promise<OutputRecord[]> => {
    let result
    try {
      result = await setup.enricher.enrich(raw)
    } catch (err) {
      if (!isRecordFailure(err)) throw err
      const e = err as Error & { code?: string }
      return invalid(row, e.code ?? 'ROW_NOT_ENRICHABLE', e.message, raw.transactionId)
    }
    const enriched = { ...result.enriched, backfill: { ...marker, row } }
    const outputs: OutputRecord[] = [
      { topic: topics.enriched, key: raw.transactionId, value: enrichedCodec.encodeSync(enriched) },
    ]
    for (const f of result.fetched)
      outputs.push({ topic: topics.fetched, key: f.uid, value: fetchedCodec.encodeSync(f) })
    outputs.push(ledger({ row, outcome: enriched.status, transactionId: raw.transactionId }))
    return outputs
  }

  const transform = async (record: PipelineRecord): Promise<OutputRecord[]> => {
    // encodeSync needs the schema ids; registering also fails fast on an incompatible schema.
    registered ??= Promise.all([enrichedCodec.register(), fetchedCodec.register()])
    await registered
    if (source.kind === 'topic') {
      const end = source.ends.get(record.partition)
      // Past the end of the range (live traffic after --to): consumed, not backfilled.
      if (end === undefined || BigInt(record.offset) >= end) return []
      const row = `${record.partition}:${record.offset}`
      let raw: RawTransaction
      try {
        raw = await rawCodec.decode(record.value)
      } catch (err) {
        if (!isRecordFailure(err)) throw err
        return invalid(row, REJECT_CODES.undecodable, (err as Error).message, record.key?.toString('utf8') ?? null)
      }
      try {
        validateEvent(raw)
      } catch (err) {
        if (!(err instanceof RowRejection)) throw err
        return invalid(row, err.code, err.message, raw.transactionId)
      }
      return enrich(raw, row)
    }
    const staged = JSON.parse((record.value ?? Buffer.alloc(0)).toString('utf8')) as StagedRow
    const row = String(staged.line)
    if ('rejection' in staged) return invalid(row, staged.rejection.code, staged.rejection.message, null)
    let raw: RawTransaction
    try {
      raw = rowToRaw(staged.fields)
    } catch (err) {
      if (!(err instanceof RowRejection)) throw err
      const id = staged.fields.transactionId
      return invalid(row, err.code, err.message, id === undefined || id === '' ? null : id)
    }
    return enrich(raw, row)
  }

  return createTransactionalPipeline({
    kafka: options.kafka,
    groupId: options.groupId,
    topics: [source.topic],
    transactionalIdPrefix: options.transactionalIdPrefix,
    transform,
    dlqTopic: topics.dlq,
    concurrency: options.concurrency ?? 500,
    partitionsConsumedConcurrently: options.partitionsConcurrently ?? 4,
    maxRecordsPerTransaction: 500,
    ...(options.consumer === undefined ? {} : { consumer: options.consumer }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
    ...(options.offsetOutOfRange === undefined ? {} : { offsetOutOfRange: options.offsetOutOfRange }),
  })
}
