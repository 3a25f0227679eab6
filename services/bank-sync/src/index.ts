export { startBankSync } from './start-bank-sync.ts'
export { DEFAULT_SCHEDULE, CONSENTS_CHECK, GATEWAY_CHECK } from './bank-sync-options.ts'
export { tokenEndpointShares } from './token-endpoint-shares.ts'
export { DEFAULT_GATEWAY_LIMITS } from './gateway-limits.ts'
export type { GatewayLimits } from './gateway-limits.ts'
export { CustomerLimitExceededError } from './customer-limit.ts'
export type { BankSync, BankSyncOptions } from './bank-sync-options.ts'
export type { BankSyncTopics, OwnerHooks, ScheduleSettings } from './owner-options.ts'
export { syncConsent } from './consent-syncer.ts'
export { DEFAULT_SYNC_SETTINGS } from './sync-deps.ts'
export { hasFreshToken } from './consent-tokens.ts'
export type { SyncSettings, SyncOutcome, SyncWrite } from './sync-deps.ts'
export { AuthorizationStateSigner, deriveStateKey, DEFAULT_STATE_TTL_MS } from './authorization-state.ts'
export type { AuthorizationStateClaims } from './authorization-state.ts'
export { decideConsentRecord, isTerminal, TERMINAL_STATUSES, SYNCING_STATUSES } from './consent-status.ts'
export {
  reconcileAccount,
  emptyAccountState,
  PENDING_MAX_AGE_DAYS,
  MAX_SEEN_ENTRIES,
} from './account-reconciler.ts'
export { planDateFrom, seenHorizon, MAX_DAYS_WITHOUT_FRESH_TOKEN } from './sync-window.ts'
export {
  toRawTransaction,
  toBankTransaction,
  bankTransactionId,
  entryKey,
  transferScheme,
  parseSymbols,
  parseCardInfo,
  BANK_SYNC_SOURCE,
} from './transaction-mapping.ts'
export { publicConsent } from './consent-view.ts'
export {
  bankSyncEnv,
  resolveKeyring,
  resolveBankClient,
  resolvePkce,
  DEVELOPMENT_BANK_CLIENT,
  resolveCustomerTokenKey,
  DEVELOPMENT_KEY_ID,
  DEVELOPMENT_CUSTOMER_TOKEN_KEY,
} from './config.ts'
export {
  CustomerTokenVerifier,
  CustomerAuthError,
  mintCustomerToken,
  DEFAULT_CUSTOMER_TOKEN_AUDIENCE,
} from './customer-token.ts'
export { CallbackBudget, CallbackBudgetExceededError } from './callback-budget.ts'
export type { GatewayOptions } from './bank-sync-options.ts'
export { BankSyncError, ConsentStateError, BankSyncConfigError, PartitionFencedError } from './errors.ts'
export { createBankSyncMetrics } from './metrics.ts'
export type { BankSyncMetrics } from './metrics.ts'
