import { BankAccessTokenExpiredError, BankUnexplainedUnauthorizedError } from '@tep/bank-client'
import type { Consent } from '@tep/schemas'
import type { SyncDeps, SyncOutcome } from './sync-deps.ts'
import { ConsentPausedUnauthorizedError } from './errors.ts'

/** A 401 that does not end the consent and that a token refresh may cure. */
export function isCuredByRefresh(
  err: unknown,
): err is BankAccessTokenExpiredError | BankUnexplainedUnauthorizedError {
  return err instanceof BankAccessTokenExpiredError || err instanceof BankUnexplainedUnauthorizedError
}

/**
 * The bank refused the access token, a refresh succeeded, and the bank refused the new token
 * too, still without a reason that ends the consent (no REASON, TOKEN_UNKNOWN, TOKEN_EXPIRED
 * on a token it just issued). Nothing says the customer withdrew: the consent stays as it is
 * (ACTIVE, tokens kept) and is tried again after `unauthorizedPauseMs`, loudly (error log,
 * bank_sync_api_errors_total{code="CONSENT_PAUSED_UNAUTHORIZED"}, alert
 * TepBankConsentPausedUnauthorized). It ends only on an explicit signal: a refused refresh the
 * bank confirms, TOKEN_REVOKED/CONSENT_EXPIRED, the 90 days.
 */
export function pausedOnUnauthorized(
  consent: Consent,
  first: BankAccessTokenExpiredError | BankUnexplainedUnauthorizedError,
  last: BankAccessTokenExpiredError | BankUnexplainedUnauthorizedError,
  deps: SyncDeps,
): SyncOutcome {
  const error = new ConsentPausedUnauthorizedError(consent.consentId, last)
  deps.metrics.apiErrors.inc({ code: error.code })
  deps.logger.error(
    {
      consentId: consent.consentId,
      customerId: consent.customerId,
      code: error.code,
      reason: last.reason ?? 'none',
      operation: last.operation,
      requestId: last.requestId,
      firstRequestId: first.requestId,
      retryInMs: deps.settings.unauthorizedPauseMs,
    },
    'the bank refused the access token (401 without a reason that ends the consent) and again right after a ' +
      'successful token refresh: the consent is kept (ACTIVE) and pauses; it is tried again later and ends only if ' +
      'the bank says it was revoked or expired',
  )
  return { kind: 'backoff', code: error.code, retryAfterMs: deps.settings.unauthorizedPauseMs, error }
}
