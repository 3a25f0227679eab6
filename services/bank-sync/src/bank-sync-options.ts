import type { BankClient } from '@tep/bank-client'
import type { AvroSerde, Kafka, KafkaLogger } from '@tep/kafka'
import type { ContractDriftRecorder, Readiness, Registry } from '@tep/observability'
import type { Consent } from '@tep/schemas'
import type { Keyring } from '@tep/token-cipher'
import type { SyncSettings } from './sync-deps.ts'
import type { GatewayLimits } from './gateway-limits.ts'
import type { BankSyncMetrics } from './metrics.ts'
import type { BankSyncTopics, OwnerHooks, ScheduleSettings } from './owner-options.ts'

export interface GatewayOptions {
  port?: number
  host?: string
  /** HMAC key (≥ 32 bytes) of the bank application's customer tokens, required: one key, or keys by `kid` while rotating (CustomerTokenVerifier). */
  customerTokenKey: Buffer | ReadonlyMap<string, Buffer>
  customerTokenAudience?: string
  customerTokenIssuer?: string
  customerTokenMaxLifetimeMs?: number
  /** Code exchanges of callbacks at once / waiting; beyond, 503. Default DEFAULT_CALLBACK_BUDGET. */
  callbackBudget?: { maxConcurrent: number; maxQueued: number }
  /** PKCE S256 with the bank. Default true. */
  pkce?: boolean
  /** Timeouts, connection cap, body limit, per-customer limit (DEFAULT_GATEWAY_LIMITS). */
  limits?: Partial<GatewayLimits>
}

export const DEFAULT_SCHEDULE: ScheduleSettings = {
  intervalMs: 6 * 3_600_000,
  jitterMs: 10 * 60_000,
  concurrency: 4,
  maxBackoffMs: 5 * 60_000,
}

export const CONSENTS_CHECK = 'consents'
export const GATEWAY_CHECK = 'consent-gateway'

export interface BankSyncOptions {
  kafka: Kafka
  /** Avro serde over the schema registry (`new AvroSerde({ registry: createSchemaRegistry({ url }) })`). */
  serde: AvroSerde
  /**
   * The bank's OAuth client; or pass `bankClient` (then wire its `onContractDrift` to
   * `contractDrift.listener` yourself if its drift should count here).
   */
  bank?: { baseUrl: string; clientId: string; clientSecret: string; redirectUri: string; tppName?: string }
  bankClient?: BankClient
  keyring: Keyring
  topics?: Partial<BankSyncTopics>
  groupId?: string
  transactionalIdPrefix?: string
  /** The consent gateway; `false` runs the sync only. Default port 8190 on 127.0.0.1. */
  gateway?: GatewayOptions | false
  sync?: Partial<SyncSettings>
  schedule?: Partial<ScheduleSettings>
  /** Business clock (consent expiry, token lifetimes, the bank's "today"). Default Date.now. */
  now?: () => number
  hooks?: OwnerHooks
  /**
   * Static membership (KIP-345) of the consents group: a stable, unique replica name
   * (pod or container name). A restart with the same id within the session timeout
   * gets its partitions back at once. Unset: dynamic membership.
   */
  groupInstanceId?: string
  /**
   * Instances running with this bank client id (BANK_SYNC_REPLICAS). The bank's token
   * endpoint budget is per client id, not per instance, so each instance takes
   * 1/replicas of it (both the callbacks' and the refreshes' share). Default 1.
   */
  replicas?: number
  /** The consents group: session timeout [30 000], heartbeat [3 000], long-poll wait [500] (ms). */
  consumer?: { sessionTimeout?: number; heartbeatInterval?: number; maxWaitTimeInMs?: number }
  logger?: KafkaLogger
  metricsRegistry?: Registry
  readiness?: Readiness
}

export interface BankSync {
  /** Base URL of the consent gateway (undefined when disabled). */
  readonly gatewayUrl: string | undefined
  readonly topics: BankSyncTopics
  readonly metrics: BankSyncMetrics
  readonly metricsRegistry: Registry
  readonly readiness: Readiness
  /** Answers of the bank that differ from the modelled one and were tolerated (tep_api_contract_drift_total). */
  readonly contractDrift: ContractDriftRecorder
  ownedPartitions(): number[]
  /** The state of a consent owned by this instance (never for consents of other instances). */
  ownedConsent(consentId: string): Consent | undefined
  /** Resolves once every partition assigned so far is rebuilt (and the gateway's view has read the topic). */
  whenCaughtUp(): Promise<void>
  /** Stops syncing (in-flight syncs get a grace period), the gateway and every client. Idempotent. */
  stop(): Promise<void>
}
