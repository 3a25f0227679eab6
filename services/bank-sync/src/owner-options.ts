import type { Kafka, TopicCodec } from '@tep/kafka'
import type { BankTransaction, Consent, RawTransaction } from '@tep/schemas'
import type { SyncDeps, SyncOutcome, SyncWrite } from './sync-deps.ts'

/** What a consents-partition owner is given: topics, codecs, schedule, the sync's dependencies, hooks. */

export interface BankSyncTopics {
  consents: string
  bankTransactions: string
  raw: string
}

export interface BankSyncCodecs {
  consent: TopicCodec<Consent>
  bankTransaction: TopicCodec<BankTransaction>
  raw: TopicCodec<RawTransaction>
}

export interface ScheduleSettings {
  intervalMs: number
  jitterMs: number
  concurrency: number
  /** Longest pause after repeated failures of one consent. */
  maxBackoffMs: number
}

/** Test and instrumentation hooks. */
export interface OwnerHooks {
  /** After a sync finished (any outcome). */
  onSynced?: (consentId: string, outcome: SyncOutcome) => void
  /**
   * Inside the transaction, after the records were sent and before the commit.
   * Tests use it to stand for a crash between fetching and committing.
   */
  beforeCommit?: (write: SyncWrite & { partition: number }) => Promise<void>
}

export interface OwnerOptions {
  partition: number
  kafka: Kafka
  topics: BankSyncTopics
  codecs: BankSyncCodecs
  transactionalIdPrefix: string
  schedule: ScheduleSettings
  sync: Omit<SyncDeps, 'commit'>
  hooks: OwnerHooks
}
