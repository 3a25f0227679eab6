import {
  HttpAbortedError,
  HttpConfigError,
  HttpNetworkError,
  HttpResponseFormatError,
  HttpStatusError,
  HttpTimeoutError,
  ThrottledError,
} from '@tep/http'
import { bankToday, daysBetween } from './dates.ts'
import { describeCobsErrors, parseCobsErrors, parseOAuthError } from './error-body.ts'
import {
  BankAccessTokenExpiredError,
  BankApiError,
  BankConsentRevokedError,
  BankForbiddenError,
  BankHistoryRequiresFreshTokenError,
  BankNotFoundError,
  BankOAuthError,
  BankProtocolError,
  BankRequestRejectedError,
  BankThrottledError,
  BankUnauthorizedError,
  BankUnavailableError,
  BankUnexplainedUnauthorizedError,
  InstantPaymentRefusedError,
} from './errors.ts'

/** The history older than this many days needs a fresh token. */
export const HISTORY_WITHOUT_FRESH_TOKEN_DAYS = 90

/** The bank's error code for "instant payment condition failed". */
export const INSTANT_REFUSAL_CODE = 'NO_PART'

/** What the mapper needs to know about the call that failed. */
export interface FailedCall {
  operation: string
  requestId: string
  now: Date
  /** The `dateFrom` sent, on transaction history reads. */
  dateFrom?: string | undefined
  /** True when an INST payment was being created. */
  instant?: boolean | undefined
}

/**
 * The 401 reasons that end a consent: the description's 401 causes are "Token revoked, or
 * consent removed, or refresh token expired". Any other 401 (no reason, `TOKEN_UNKNOWN`, a
 * reason not modelled) is BankUnexplainedUnauthorizedError: refresh and retry, never an end.
 */
export const CONSENT_ENDED_REASONS: ReadonlySet<string> = new Set(['TOKEN_REVOKED', 'CONSENT_EXPIRED'])

/**
 * Turns a failure of @tep/http into the bank client's typed errors. Errors that are not
 * about the bank (caller abort, client misconfiguration) pass through unchanged.
 */
export function toBankError(err: unknown, call: FailedCall): unknown {
  if (err instanceof HttpAbortedError || err instanceof HttpConfigError) return err
  const base = { operation: call.operation, requestId: call.requestId, cause: err }
  const idText = `(X-Request-ID ${call.requestId})`

  if (err instanceof ThrottledError) {
    const errors = parseCobsErrors(err.bodyText)
    const wait = err.retryAfterMs === undefined ? '' : `; the bank asks to wait ${err.retryAfterMs} ms`
    return new BankThrottledError(`${call.operation}: the bank throttled the call (429)${wait} ${idText}`, {
      ...base,
      status: 429,
      errors,
      retryAfterMs: err.retryAfterMs,
    })
  }
  if (err instanceof HttpStatusError) return fromStatus(err, call)
  if (err instanceof HttpTimeoutError || err instanceof HttpNetworkError) {
    return new BankUnavailableError(`${call.operation}: ${err.message} ${idText}`, {
      ...base,
      retriable: err.retriable,
    })
  }
  if (err instanceof HttpResponseFormatError) {
    return new BankProtocolError(
      `${call.operation}: the bank's answer is unusable: ${err.message} ${idText}`,
      { ...base, status: err.status },
    )
  }
  return err
}

function fromStatus(err: HttpStatusError, call: FailedCall): BankApiError {
  const errors = parseCobsErrors(err.bodyText)
  const status = err.status
  const opts = { operation: call.operation, requestId: call.requestId, status, errors, cause: err }
  const what = errors.length > 0 ? describeCobsErrors(errors) : err.bodySnippet || 'no error body'
  const text = `${call.operation}: the bank answered ${status}: ${what} (X-Request-ID ${call.requestId})`
  const first = errors[0]
  const reason = typeof first?.parameters?.REASON === 'string' ? first.parameters.REASON : undefined

  if (status === 401) {
    if (call.dateFrom !== undefined && isHistoryRefusal(reason, first?.scope, call)) {
      return new BankHistoryRequiresFreshTokenError(
        `${text}; transactions from ${call.dateFrom} (more than ${HISTORY_WITHOUT_FRESH_TOKEN_DAYS} days back) need a token ` +
          'fresh from the consent flow: send the user through the authorization again, or ask for 90 days at most',
        { ...opts, dateFrom: call.dateFrom },
      )
    }
    if (reason === 'TOKEN_EXPIRED') {
      return new BankAccessTokenExpiredError(`${text}; refresh the access token and call again`, opts)
    }
    if (first?.scope === 'X-IBM-Client-Id' || reason === 'TOKEN_MISSING') {
      return new BankUnauthorizedError(`${text}; check the client id and that a token is passed`, {
        ...opts,
        code: 'BANK_CLIENT_REJECTED',
      })
    }
    if (reason !== undefined && CONSENT_ENDED_REASONS.has(reason)) {
      return new BankConsentRevokedError(`${text}; the consent is no longer valid: restart the consent flow`, opts)
    }
    return new BankUnexplainedUnauthorizedError(
      `${text}; the bank gave ${reason === undefined ? 'no reason' : `reason ${reason}, which does not say the consent ended`}: ` +
        'refresh the tokens and call once more',
      opts,
    )
  }
  if (status === 403)
    return new BankForbiddenError(`${text}; the consent or token scope does not cover this`, opts)
  if (status === 404) return new BankNotFoundError(text, opts)
  if (status === 400 && call.instant === true && errors.some((e) => e.error === INSTANT_REFUSAL_CODE)) {
    return new InstantPaymentRefusedError(`${text}; initiate the payment again as NORM or HIGH`, opts)
  }
  if (status >= 500)
    return new BankUnavailableError(text, { ...opts, retriable: err.retriable || status === 503 })
  return new BankRequestRejectedError(text, opts)
}

/**
 * The bank marks the refusal with scope `dateFrom` / REASON `SCA_REQUIRED`. A bank that sends
 * no reason at all is judged by the request: a dateFrom more than 90 days back.
 */
function isHistoryRefusal(reason: string | undefined, scope: string | undefined, call: FailedCall): boolean {
  if (reason === 'SCA_REQUIRED' || scope === 'dateFrom') return true
  if (reason !== undefined) return false
  return daysBetween(call.dateFrom!, bankToday(call.now)) > HISTORY_WITHOUT_FRESH_TOKEN_DAYS
}

/** What the token-endpoint mapper needs. */
export interface FailedTokenCall extends FailedCall {
  grant: 'authorization_code' | 'refresh_token'
}

/**
 * Token endpoint failures. A refused refresh token (`invalid_grant`, 400 or 401) means the
 * consent is gone; a refused code is just a bad code.
 */
export function toBankTokenError(err: unknown, call: FailedTokenCall): unknown {
  if (!(err instanceof HttpStatusError) || err instanceof ThrottledError || err.status >= 500)
    return toBankError(err, call)
  const body = parseOAuthError(err.bodyText)
  const oauthError = body?.error ?? `http_${err.status}`
  const description = body?.error_description
  const text =
    `${call.operation}: the token endpoint answered ${err.status} ${oauthError}` +
    `${description ? ` (${description})` : ''} (X-Request-ID ${call.requestId})`
  const opts = { operation: call.operation, requestId: call.requestId, status: err.status, cause: err }
  if (oauthError === 'invalid_grant' && call.grant === 'refresh_token') {
    // Also a refresh token that was rotated out: whoever holds the newest one may continue, this caller cannot.
    // The answer does not say revoked from expired (90 days); the error keeps the answer (cause, with its
    // Date header) so the caller can judge by the consent's end (bank-sync: consent-syncer endVerdict).
    return new BankConsentRevokedError(
      `${text}; the refresh token is revoked, expired or rotated out: restart the consent flow`,
      {
        ...opts,
        details: { oauthError },
      },
    )
  }
  const hint =
    oauthError === 'invalid_client'
      ? '; check BANK_CLIENT_ID and BANK_CLIENT_SECRET'
      : oauthError === 'invalid_grant'
        ? '; the authorization code is unknown, used, expired, or the redirect URI differs from the authorization request'
        : ''
  return new BankOAuthError(`${text}${hint}`, { ...opts, oauthError, oauthErrorDescription: description })
}
