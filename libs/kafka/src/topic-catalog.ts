import type { SchemaName } from '@tep/schemas'
import { KafkaConfigError } from './errors.ts'

/**
 * The topics of ARCHITECTURE.md section 3, plus the internal topics the services
 * need, as data. `ensureTopics` applies it; services and tests refer to topic
 * names through `TOPICS` instead of string literals.
 */

export const TOPICS = {
  transactionsRaw: 'transactions.raw.v1',
  transactionsEnriched: 'transactions.enriched.v1',
  transactionsDlq: 'transactions.dlq.v1',
  /** Operations: the ledger of DLQ re-drives (`npm run dlq -- redrive`), one JSON audit record per transaction. */
  transactionsDlqRedrives: 'transactions.dlq.redrives.v1',
  merchantInvalidations: 'merchant.invalidations.v1',
  merchantShops: 'merchant.shops.v1',
  merchantMerchants: 'merchant.merchants.v1',
  bankConsents: 'bank.consents.v1',
  bankTransactions: 'bank.transactions.v1',
  /** Internal: shops/merchants transaction-ingest fetched on a cache miss, for the refresher. */
  merchantFetched: 'merchant.fetched.v1',
  /** Internal: the invalidation poller's position in the feed (compacted, one partition). */
  merchantInvalidationsCursor: 'merchant.invalidations.cursor.v1',
} as const

export type TopicName = (typeof TOPICS)[keyof typeof TOPICS]

export type CleanupPolicy = 'delete' | 'compact'

export interface TopicSpec {
  readonly name: string
  readonly partitions: number
  readonly cleanupPolicy: CleanupPolicy
  /** Schema of the values (subject `<name>-value`); null when values are not Avro (the DLQ keeps original bytes). */
  readonly valueSchema: SchemaName | null
  /** What the UTF-8 string key is. */
  readonly key: string
  /** Topic-level configs set at creation (cleanup.policy is added from cleanupPolicy). */
  readonly configs: Readonly<Record<string, string>>
  readonly description: string
}

const DAY_MS = 86_400_000

/**
 * Compaction settings for the compacted state topics: segments roll at least
 * hourly and the cleaner starts at 10% dirty, so a reader rebuilding a table
 * reads few superseded versions; tombstones stay a day so a restarting reader
 * still sees deletions.
 */
const COMPACTED = {
  'segment.ms': String(3_600_000),
  'min.cleanable.dirty.ratio': '0.1',
  'delete.retention.ms': String(DAY_MS),
  'min.compaction.lag.ms': '0',
} as const

export interface CatalogOptions {
  /** Partitions of the partitioned topics; default 6. The cursor topic always has 1. */
  partitions?: number
  /** Retention of the event (delete) topics; default 7 days. */
  retentionMs?: number
  /** Retention of the DLQ; default 30 days (someone has to look at it). */
  dlqRetentionMs?: number
}

export const DEFAULT_PARTITIONS = 6

/** The topic catalog with the given sizing; `TOPIC_CATALOG` is the default. */
export function topicCatalog(options: CatalogOptions = {}): TopicSpec[] {
  const partitions = options.partitions ?? DEFAULT_PARTITIONS
  const retention = { 'retention.ms': String(options.retentionMs ?? 7 * DAY_MS) }
  const dlqRetention = { 'retention.ms': String(options.dlqRetentionMs ?? 30 * DAY_MS) }
  return [
    {
      name: TOPICS.transactionsRaw,
      partitions,
      cleanupPolicy: 'delete',
      valueSchema: 'RawTransaction',
      key: 'transactionId',
      configs: retention,
      description: 'Raw card transactions and bank transfers to enrich.',
    },
    {
      name: TOPICS.transactionsEnriched,
      partitions,
      cleanupPolicy: 'delete',
      valueSchema: 'EnrichedTransaction',
      key: 'transactionId (same partitioning as raw)',
      configs: retention,
      description: 'One enrichment result per raw transaction.',
    },
    {
      name: TOPICS.transactionsDlq,
      partitions,
      cleanupPolicy: 'delete',
      valueSchema: null,
      key: 'original key',
      configs: dlqRetention,
      description:
        'Records that could not be processed: original key and value bytes, dlq.* headers say why.',
    },
    {
      name: TOPICS.transactionsDlqRedrives,
      // One partition: the ledger is read whole before every re-drive, in the order it was written.
      partitions: 1,
      cleanupPolicy: 'delete',
      valueSchema: null,
      key: 'redrive id',
      // Kept for ever: it is what refuses a second re-drive of a DLQ record, so it must outlive the DLQ.
      configs: { 'retention.ms': '-1' },
      description:
        'Audit ledger of DLQ re-drives: what was re-driven (DLQ positions), by whom, when and why; JSON values, written in the same transaction as the re-driven records.',
    },
    {
      name: TOPICS.merchantInvalidations,
      partitions,
      cleanupPolicy: 'delete',
      valueSchema: 'Invalidation',
      key: 'invalidated entity key (shop uid, merchant uid or handle)',
      configs: retention,
      description: 'Items of the enrichment invalidation feed.',
    },
    {
      name: TOPICS.merchantShops,
      partitions,
      cleanupPolicy: 'compact',
      valueSchema: 'Shop',
      key: 'shop uid',
      configs: COMPACTED,
      description: 'Latest snapshot of every known shop; tombstone when gone.',
    },
    {
      name: TOPICS.merchantMerchants,
      partitions,
      cleanupPolicy: 'compact',
      valueSchema: 'Merchant',
      key: 'merchant uid',
      configs: COMPACTED,
      description: 'Latest snapshot of every known merchant; tombstone when gone.',
    },
    {
      name: TOPICS.bankConsents,
      partitions,
      cleanupPolicy: 'compact',
      valueSchema: 'Consent',
      key: 'consentId',
      configs: COMPACTED,
      description: 'Bank consent state with encrypted tokens and sync watermarks.',
    },
    {
      name: TOPICS.bankTransactions,
      partitions,
      cleanupPolicy: 'delete',
      valueSchema: 'BankTransaction',
      key: 'consentId/accountId/entryReference',
      configs: retention,
      description: 'Transactions read from customers bank accounts (ADDED, MODIFIED).',
    },
    {
      name: TOPICS.merchantFetched,
      partitions,
      cleanupPolicy: 'delete',
      valueSchema: 'MerchantDataFetched',
      key: 'shop or merchant uid',
      configs: { 'retention.ms': String(DAY_MS) },
      description:
        'Internal: shops and merchants transaction-ingest fetched on a cache miss, for the refresher.',
    },
    {
      name: TOPICS.merchantInvalidationsCursor,
      partitions: 1,
      cleanupPolicy: 'compact',
      valueSchema: 'InvalidationCursor',
      key: 'feed name',
      configs: COMPACTED,
      description:
        'Internal: position of the invalidation poller, written in the same transaction as the items.',
    },
  ]
}

export const TOPIC_CATALOG: readonly TopicSpec[] = topicCatalog()

/** The catalog entry of a topic, or an error naming the known topics. */
export function topicSpec(name: string, catalog: readonly TopicSpec[] = TOPIC_CATALOG): TopicSpec {
  const spec = catalog.find((t) => t.name === name)
  if (spec === undefined) {
    throw new KafkaConfigError(
      `topic ${name} is not in the catalog; known topics: ${catalog.map((t) => t.name).join(', ')}`,
      { topic: name },
    )
  }
  return spec
}
