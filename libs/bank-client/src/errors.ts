import { PipelineError } from '@tep/errors'

/** One entry of the COBS error body `{errors:[{error, scope, parameters, message}]}`. */
export interface CobsErrorItem {
  /** The code, e.g. `AC09`, `NO_PART`, `UNAUTHORISED`. */
  readonly error: string
  /** JSON path of the offending request element, or a parameter name. */
  readonly scope?: string | undefined
  readonly parameters?: Readonly<Record<string, unknown>> | undefined
  /** For logs, not for users. */
  readonly message?: string | undefined
}

/** Root of every error @tep/bank-client throws on purpose. */
export class BankClientError extends PipelineError {}

// ---------------------------------------------------------------- before sending

/** A call argument is unusable (page size out of range, malformed date, missing token). Nothing was sent. */
export class BankInvalidArgumentError extends BankClientError {
  readonly field: string

  constructor(field: string, message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'BANK_INVALID_ARGUMENT', details: { field, ...details } })
    this.field = field
  }
}

/** One reason a request breaks a rule of the bank. */
export interface RuleViolation {
  /** Stable id of the rule, e.g. `INSTANT_AMOUNT_LIMIT`. */
  readonly rule: string
  /** Dotted path of the request field concerned. */
  readonly field: string
  readonly message: string
}

/** The request breaks a documented rule of the bank, so sending it could only fail. Nothing was sent. */
export class BankRuleViolationError extends BankClientError {
  readonly violations: readonly RuleViolation[]

  constructor(code: string, summary: string, violations: readonly RuleViolation[]) {
    super(`${summary}: ${violations.map((v) => `${v.field}: ${v.message}`).join('; ')}`, {
      code,
      details: { violations: violations.map((v) => ({ rule: v.rule, field: v.field })) },
    })
    this.violations = violations
  }
}

/** An instant (INST) payment breaks an instant-payment condition; send it as NORM or HIGH instead. */
export class InstantPaymentRuleError extends BankRuleViolationError {
  constructor(violations: readonly RuleViolation[]) {
    super(
      'INSTANT_PAYMENT_NOT_ALLOWED',
      'instant payment not allowed (initiate it as a normal or express payment)',
      violations,
    )
  }
}

/** A standing order uses an interval, mode or field the bank does not support (and the policy is to refuse). */
export class StandingOrderRuleError extends BankRuleViolationError {
  constructor(violations: readonly RuleViolation[]) {
    super('STANDING_ORDER_NOT_SUPPORTED', 'standing order not supported by the bank', violations)
  }
}

/** A payment request is incomplete or malformed for its kind (bad IBAN, amount with too many decimals). */
export class PaymentRequestInvalidError extends BankRuleViolationError {
  constructor(violations: readonly RuleViolation[]) {
    super('PAYMENT_REQUEST_INVALID', 'payment request invalid', violations)
  }
}

// ---------------------------------------------------------------- answers of the bank

export interface BankApiErrorOptions {
  code: string
  retriable?: boolean
  operation: string
  /** HTTP status, or undefined when no answer arrived. */
  status?: number | undefined
  /** The X-Request-ID this client sent: quote it to the bank's support. */
  requestId: string
  errors?: readonly CobsErrorItem[]
  cause?: unknown
  details?: Record<string, unknown>
}

/** Something went wrong talking to the bank. Carries the request id of the call and the bank's error items. */
export class BankApiError extends BankClientError {
  readonly operation: string
  readonly status: number | undefined
  readonly requestId: string
  readonly errors: readonly CobsErrorItem[]

  constructor(message: string, options: BankApiErrorOptions) {
    const errors = options.errors ?? []
    super(message, {
      code: options.code,
      retriable: options.retriable ?? false,
      cause: options.cause,
      details: {
        operation: options.operation,
        status: options.status,
        requestId: options.requestId,
        bankErrors: errors.map((e) => ({ error: e.error, scope: e.scope })),
        ...options.details,
      },
    })
    this.operation = options.operation
    this.status = options.status
    this.requestId = options.requestId
    this.errors = errors
  }

  /** `parameters.REASON` of the first error item, when the bank sent one (e.g. `TOKEN_REVOKED`, `SCA_REQUIRED`). */
  get reason(): string | undefined {
    const value = this.errors[0]?.parameters?.REASON
    return typeof value === 'string' ? value : undefined
  }

  /** The bank's error codes, e.g. `['AC09']`. */
  get bankCodes(): string[] {
    return this.errors.map((e) => e.error)
  }
}

/** 401 from the bank. The subclasses say what the caller should do; this class itself means a client misconfiguration (wrong X-IBM-Client-Id) or a missing token. */
export class BankUnauthorizedError extends BankApiError {
  constructor(message: string, options: Omit<BankApiErrorOptions, 'retriable'>) {
    super(message, { ...options, retriable: false })
  }
}

/**
 * The consent is gone: the user revoked it, the accounts refresh token passed its 90 days,
 * or the token endpoint refused the refresh token. Restart the consent flow; retrying cannot help.
 */
export class BankConsentRevokedError extends BankUnauthorizedError {
  constructor(message: string, options: Omit<BankApiErrorOptions, 'code' | 'retriable'>) {
    super(message, { ...options, code: 'CONSENT_REVOKED' })
  }
}

/** The access token expired (the consent may be fine): refresh, persist the new refresh token, call again. */
export class BankAccessTokenExpiredError extends BankUnauthorizedError {
  constructor(message: string, options: Omit<BankApiErrorOptions, 'code' | 'retriable'>) {
    super(message, { ...options, code: 'ACCESS_TOKEN_EXPIRED' })
  }
}

/**
 * 401 that says neither "revoked" nor "consent expired": no COBS `REASON` at all (the
 * description does not show the error body), or a reason this client does not know
 * (`TOKEN_UNKNOWN` included). Most likely an access token the bank considers expired. Refresh
 * the tokens and call once more; if that is refused the same way, keep the consent and
 * alert: only an explicit signal ends a consent.
 */
export class BankUnexplainedUnauthorizedError extends BankUnauthorizedError {
  constructor(message: string, options: Omit<BankApiErrorOptions, 'code' | 'retriable'>) {
    super(message, { ...options, code: 'UNAUTHORIZED_UNEXPLAINED' })
  }
}

/**
 * The bank refused transaction history older than 90 days because the token is not fresh
 * (the consent itself is fine). Only a new consent flow gives a fresh token; until then ask
 * for at most 90 days.
 */
export class BankHistoryRequiresFreshTokenError extends BankUnauthorizedError {
  readonly dateFrom: string

  constructor(
    message: string,
    options: Omit<BankApiErrorOptions, 'code' | 'retriable'> & { dateFrom: string },
  ) {
    super(message, {
      ...options,
      code: 'HISTORY_REQUIRES_FRESH_TOKEN',
      details: { dateFrom: options.dateFrom },
    })
    this.dateFrom = options.dateFrom
  }
}

/** 403: the consent or licence does not cover this account or operation. */
export class BankForbiddenError extends BankApiError {
  constructor(message: string, options: Omit<BankApiErrorOptions, 'code' | 'retriable'>) {
    super(message, { ...options, code: 'BANK_FORBIDDEN', retriable: false })
  }
}

/** 404: unknown account, payment, standing order or page. */
export class BankNotFoundError extends BankApiError {
  constructor(message: string, options: Omit<BankApiErrorOptions, 'code' | 'retriable'>) {
    super(message, { ...options, code: 'BANK_NOT_FOUND', retriable: false })
  }
}

/** 400/409/415/422: the bank rejected this request's content. See `errors` for the codes and scopes. */
export class BankRequestRejectedError extends BankApiError {
  constructor(message: string, options: Omit<BankApiErrorOptions, 'retriable' | 'code'> & { code?: string }) {
    super(message, { ...options, code: options.code ?? 'BANK_REQUEST_REJECTED', retriable: false })
  }
}

/** 400 on an INST payment: an instant condition failed at the bank. Re-initiate it as NORM or HIGH. */
export class InstantPaymentRefusedError extends BankRequestRejectedError {
  constructor(message: string, options: Omit<BankApiErrorOptions, 'retriable' | 'code'>) {
    super(message, { ...options, code: 'INSTANT_PAYMENT_REFUSED' })
  }
}

/** 429 after the in-line retries: slow down. `retryAfterMs` is the bank's Retry-After when it sent one. */
export class BankThrottledError extends BankApiError {
  readonly retryAfterMs: number | undefined

  constructor(
    message: string,
    options: Omit<BankApiErrorOptions, 'code' | 'retriable'> & { retryAfterMs: number | undefined },
  ) {
    super(message, {
      ...options,
      code: 'BANK_THROTTLED',
      retriable: true,
      details: { retryAfterMs: options.retryAfterMs },
    })
    this.retryAfterMs = options.retryAfterMs
  }
}

/** 5xx, timeout or network failure after the retries the policy allows. Retriable later. */
export class BankUnavailableError extends BankApiError {
  constructor(message: string, options: Omit<BankApiErrorOptions, 'code'>) {
    super(message, { ...options, code: 'BANK_UNAVAILABLE', retriable: options.retriable ?? true })
  }
}

/**
 * The token endpoint refused the request for a reason other than a dead consent:
 * `invalid_client` (wrong client id or secret), `invalid_request`, `invalid_scope`, a bad
 * or reused authorization code (`invalid_grant` on code exchange).
 */
export class BankOAuthError extends BankApiError {
  readonly oauthError: string
  readonly oauthErrorDescription: string | undefined

  constructor(
    message: string,
    options: Omit<BankApiErrorOptions, 'code' | 'retriable'> & {
      oauthError: string
      oauthErrorDescription?: string | undefined
    },
  ) {
    super(message, {
      ...options,
      code: options.oauthError === 'invalid_client' ? 'BANK_CLIENT_REJECTED' : 'BANK_OAUTH_ERROR',
      retriable: false,
      details: { oauthError: options.oauthError },
    })
    this.oauthError = options.oauthError
    this.oauthErrorDescription = options.oauthErrorDescription
  }
}

/** The bank answered 2xx with something this client cannot use (not JSON, fields missing, paging that does not advance). */
export class BankProtocolError extends BankApiError {
  constructor(message: string, options: Omit<BankApiErrorOptions, 'code' | 'retriable'>) {
    super(message, { ...options, code: 'BANK_PROTOCOL_ERROR', retriable: false })
  }
}

/** The browser came back from the consent pages without a usable authorization code. */
export class BankAuthorizationCallbackError extends BankClientError {
  constructor(
    code: 'AUTHORIZATION_DENIED' | 'AUTHORIZATION_STATE_MISMATCH' | 'AUTHORIZATION_CALLBACK_INVALID',
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super(message, { code, details })
  }
}
