import type { BankClient } from '@tep/bank-client'
import type { BankTransaction, Consent, RawTransaction } from '@tep/schemas'
import type { TokenCipher } from '@tep/token-cipher'
import type { BankSyncMetrics } from './metrics.ts'

/**
 * What one consent's sync needs and what it answers: the settings, the collaborators
 * (bank, cipher, commit, metrics, logger) and the outcome. Apart from consent-syncer.ts
 * so that the modules the sync delegates to (entry mapping, the 401 pause) can name
 * them without importing the sync itself.
 */
export interface SyncSettings {
  overlapDays: number
  pageSize: number
  backfillDays: number
  /** Announce EXPIRING this long before the consent ends. */
  expiryWarningMs: number
  /** Refresh the access token this long before it expires. */
  refreshMarginMs: number
  /**
   * How long after the code exchange a token counts as fresh for history older than
   * 90 days. The bank does not publish it; kept below the simulator's 15 minutes.
   */
  freshTokenMs: number
  /**
   * Wait before syncing again a consent paused on a 401 that a token refresh did not cure
   * (ConsentPausedUnauthorizedError). Each try costs a token refresh; below the alert's 15
   * minutes so that a pause that lasts keeps it firing.
   */
  unauthorizedPauseMs: number
}

export const DEFAULT_SYNC_SETTINGS: SyncSettings = {
  overlapDays: 3,
  pageSize: 100,
  backfillDays: 365,
  expiryWarningMs: 7 * 86_400_000,
  refreshMarginMs: 60_000,
  freshTokenMs: 10 * 60_000,
  unauthorizedPauseMs: 10 * 60_000,
}

/** What one sync writes, all in one Kafka transaction. */
export interface SyncWrite {
  /** The consent's next state (version and updatedAt are set by the writer). */
  consent: Consent
  bankTransactions: BankTransaction[]
  rawTransactions: RawTransaction[]
  reason: 'SYNC' | 'TOKEN_REFRESH' | 'EXPIRING' | 'EXPIRED' | 'REVOKED' | 'REASSERT'
}

export interface SyncLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface SyncDeps {
  bank: BankClient
  cipher: TokenCipher
  now: () => number
  settings: SyncSettings
  /**
   * Writes and commits; resolves with the consent as stored, or null when the write
   * was refused because the consent meanwhile reached a terminal state.
   */
  commit: (write: SyncWrite) => Promise<Consent | null>
  metrics: BankSyncMetrics
  logger: SyncLogger
  /**
   * Rotated tokens the bank issued whose write to the consents topic failed, by consent id.
   * Process-wide (it must outlive partition owners, which a broker outage's rebalance
   * rebuilds): the bank has already rotated the refresh token, so these are the only
   * working ones until they are written.
   */
  unsavedTokens: Map<string, UnsavedTokens>
}

type TokenFields = Pick<
  Consent,
  'accessToken' | 'refreshToken' | 'accessTokenExpiresAt' | 'refreshTokenExpiresAt' | 'tokenIssuedAt'
>

/** A refresh's result not yet durably written, and the sealed refresh token it replaced. */
export interface UnsavedTokens {
  basedOn: string | null
  fields: TokenFields
}

export type SyncOutcome =
  | { kind: 'synced'; consent: Consent; added: number; modified: number; raw: number; pages: number }
  | { kind: 'stopped'; status: Consent['status'] }
  | { kind: 'skipped'; reason: string }
  | { kind: 'backoff'; code: string; retryAfterMs: number | undefined; error: unknown }
