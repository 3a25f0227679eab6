import type { EnrichmentClient } from '@tep/enrichment-client'
import type { AvroSerde, Kafka, RetryPolicy, TopicPartition } from '@tep/kafka'
import type { Logger, Readiness, Registry } from '@tep/observability'
import type { EntityVersions } from './entity-versions.ts'
import type { EntityFetcher } from './refresh-batch.ts'
import type { EntityKind } from './refresh-input.ts'
import type { ReenrichReport } from './reenrich/reenrich.ts'
import type { SweepResult } from './sweeper.ts'

/** What the refresher is started with (startRefresher), and the handle it returns. */

export interface RefresherTopics {
  invalidations: string
  fetched: string
  shops: string
  merchants: string
  dlq: string
  /** Read and written only by the automatic re-enrichment of invalidated handles. */
  enriched: string
  raw: string
}

export interface RefresherOptions {
  kafka: Kafka
  serde: AvroSerde
  /** The enrichment API client (its reads are timed into the refresher's metrics). */
  client?: Pick<EnrichmentClient, 'getShop' | 'getMerchant'>
  /** Instead of `client`: any reader of shops and merchants (tests). */
  fetcher?: EntityFetcher
  /** Errors that concern only the key read (the key is skipped, the batch goes on); default: the API's 400s. */
  isRecordScoped?: (err: unknown) => boolean
  /** False: no invalidation feed is followed, so the sweep keeps entries younger than `maxAgeMs`. */
  invalidationsEnabled: boolean
  /** Spec limit 4: one week. */
  maxAgeMs: number
  sweepIntervalMs: number
  /** Re-fetch this long before `maxAgeMs` on top of one sweep interval; default 1 hour. */
  sweepMarginMs?: number
  /** Refresh requests per entity kind and sweep; default 10 000. */
  sweepMaxPerRun?: number
  /** API reads in flight per consumed batch; default 8 (the client's limiter bounds the credential overall). */
  fetchConcurrency?: number
  groupId?: string
  transactionalIdPrefix?: string
  topics?: Partial<RefresherTopics>
  logger: Logger
  registry?: Registry
  readiness?: Readiness
  /** Backoff of a partition after a systemic failure (API outage, throttling); @tep/kafka defaults otherwise. */
  retryPolicy?: Partial<RetryPolicy>
  /** Extra consumer settings of the pipeline (tests shorten timings). */
  consumer?: { sessionTimeout?: number; heartbeatInterval?: number; maxWaitTimeInMs?: number }
  now?: () => number
  /**
   * With invalidations enabled, read back the invalidations of the last
   * `maxAgeMs` at start for items without a key (default true), so that a
   * restart does not forget that the age-bound sweep must go on.
   */
  rescanUnkeyedOnStart?: boolean
  /**
   * Act on handle (mapping) invalidations by re-enriching the affected
   * transactions (auto-reenrich.ts). The service turns it on by default
   * (REENRICH_HANDLES) within its budget: `maxPerRun` findBy calls and a read of
   * `transactions.enriched.v1` limited to the last `enrichedWindowMs`.
   */
  reenrichHandles?: { intervalMs: number; maxPerRun: number; firstLookbackMs?: number; enrichedWindowMs?: number }
}

export interface RefresherHandle {
  /** What the refresher knows the compacted topics hold. */
  readonly views: Readonly<Record<EntityKind, EntityVersions>>
  /** Resolves at the next partition assignment of the pipeline (or the current one). */
  whenAssigned(): Promise<TopicPartition[]>
  /** Runs one sweep now (also when invalidations are enabled, for operators and tests). */
  sweepNow(): Promise<SweepResult>
  /** Epoch ms until which the sweep runs because of items without a key (0: never); see age-bound.ts. */
  ageBoundUntil(): number
  /** Resolves once the start-up read-back of items without a key has ended (at once when there is none). */
  whenRescanned(): Promise<void>
  /** One re-enrichment run of invalidated handles now (only with the `reenrichHandles` option). */
  reenrichNow(): Promise<ReenrichReport>
  stop(): Promise<void>
}
