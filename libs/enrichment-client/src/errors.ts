import { PipelineError } from '@tep/errors'

/**
 * Errors of the enrichment client. Callers branch on `code` or `instanceof`:
 *
 * - `recordScoped` is true when the failure concerns only the input of this
 *   request (400): the pipeline marks that record REJECTED and carries on. Every
 *   other failure is systemic (credentials, outage, throttling): back off, pause.
 * - `retriable` says whether sending the same request again can help.
 *
 * Messages and `details` name the operation and a redacted URL (query values
 * hidden) and never hold credentials or tokens.
 */

/** The error body of the API (`{"error": {"code", "message", "parameter"?}}`), when it sent one. */
export interface ApiErrorBody {
  code?: string
  message?: string
  parameter?: string
}

export interface EnrichmentErrorOptions {
  operation: string
  retriable: boolean
  recordScoped?: boolean
  status?: number
  /** Redacted URL of the request. */
  url?: string
  method?: string
  apiError?: ApiErrorBody
  /** The server's `x-request-id`, for support tickets. */
  requestId?: string
  cause?: unknown
  details?: Record<string, unknown>
}

export class EnrichmentApiError extends PipelineError {
  readonly operation: string
  readonly status: number | undefined
  readonly recordScoped: boolean
  readonly apiError: ApiErrorBody | undefined
  readonly requestId: string | undefined

  constructor(message: string, code: string, options: EnrichmentErrorOptions) {
    super(message, {
      code,
      retriable: options.retriable,
      cause: options.cause,
      details: {
        operation: options.operation,
        ...(options.method === undefined ? {} : { method: options.method }),
        ...(options.url === undefined ? {} : { url: options.url }),
        ...(options.status === undefined ? {} : { status: options.status }),
        ...(options.apiError === undefined ? {} : { apiError: options.apiError }),
        ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
        recordScoped: options.recordScoped ?? false,
        ...options.details,
      },
    })
    this.operation = options.operation
    this.status = options.status
    this.recordScoped = options.recordScoped ?? false
    this.apiError = options.apiError
    this.requestId = options.requestId
  }
}

/** 400: the API rejected this request's input. Not retriable; record-scoped. */
export class EnrichmentBadRequestError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_BAD_REQUEST', {
      ...options,
      retriable: false,
      recordScoped: options.recordScoped ?? true,
    })
  }
}

/**
 * 413, 414 or 431: the request was too large for the API (body, URL or
 * headers). When the request's own content is large (error-mapping.ts
 * `ownContentTooLarge`) it is record-scoped and not retriable: a batch is split
 * into single calls, a single call ends its record; treating it as an outage
 * would redo the same record forever. When even a minimal request is refused (or
 * the headers, which no record fills), `recordScoped` is false: a proxy's limit or
 * an oversized bearer token would otherwise dead-letter the whole stream.
 */
export class EnrichmentRequestTooLargeError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_REQUEST_TOO_LARGE', {
      ...options,
      retriable: false,
      recordScoped: options.recordScoped ?? true,
    })
  }
}

/** 401 after one renewal of the token (or with Basic credentials). Not retriable until the credentials are fixed. */
export class EnrichmentUnauthorizedError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_UNAUTHORIZED', { ...options, retriable: false })
  }
}

/** 403: valid credentials without the right for this operation (e.g. missing scope). */
export class EnrichmentForbiddenError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_FORBIDDEN', { ...options, retriable: false })
  }
}

/** 404 where "not found" is not an answer: unknown shop/merchant, or a route that does not exist (wrong base URL). */
export class EnrichmentNotFoundError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_NOT_FOUND', { ...options, retriable: false })
  }
}

/** 405: the client used a method the path does not allow (a client/API version mismatch). */
export class EnrichmentMethodNotAllowedError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_METHOD_NOT_ALLOWED', { ...options, retriable: false })
  }
}

/** 415: the API refused the body's media type (a client/API version mismatch). */
export class EnrichmentUnsupportedMediaTypeError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_UNSUPPORTED_MEDIA_TYPE', { ...options, retriable: false })
  }
}

/** 501: the operation or variant is not offered. */
export class EnrichmentNotImplementedError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_NOT_IMPLEMENTED', { ...options, retriable: false })
  }
}

/** 500, 502, 503, 504 and other 5xx: the service failed. Retriable. */
export class EnrichmentServerError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_SERVER_ERROR', { ...options, retriable: true })
  }
}

/** 429: over the credential's rate limit. Retriable after `retryAfterMs` (when the server said). */
export class EnrichmentThrottledError extends EnrichmentApiError {
  readonly retryAfterMs: number | undefined

  constructor(
    message: string,
    options: Omit<EnrichmentErrorOptions, 'retriable'> & { retryAfterMs: number | undefined },
  ) {
    super(message, 'ENRICHMENT_THROTTLED', {
      ...options,
      retriable: true,
      details: { ...options.details, retryAfterMs: options.retryAfterMs },
    })
    this.retryAfterMs = options.retryAfterMs
  }
}

/** A status the spec does not list (e.g. 409, 422). Not retriable. */
export class EnrichmentUnexpectedStatusError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_UNEXPECTED_STATUS', { ...options, retriable: false })
  }
}

/** The connection failed or broke. Retriable, except TLS failures (configuration). */
export class EnrichmentNetworkError extends EnrichmentApiError {
  constructor(message: string, options: EnrichmentErrorOptions) {
    super(message, 'ENRICHMENT_NETWORK_ERROR', options)
  }
}

/** No connection, headers or body within the configured time. Retriable. */
export class EnrichmentTimeoutError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_TIMEOUT', { ...options, retriable: true })
  }
}

/** The caller's AbortSignal fired. */
export class EnrichmentAbortedError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_ABORTED', { ...options, retriable: false })
  }
}

/** The token endpoint refused the client credentials (400/401 with an OAuth error). */
export class EnrichmentAuthError extends EnrichmentApiError {
  /** RFC 6749 error code from the token endpoint (invalid_client, ...). */
  readonly oauthError: string | undefined

  constructor(
    message: string,
    options: Omit<EnrichmentErrorOptions, 'retriable'> & { oauthError: string | undefined },
  ) {
    super(message, 'ENRICHMENT_AUTH_FAILED', {
      ...options,
      retriable: false,
      details: { ...options.details, oauthError: options.oauthError },
    })
    this.oauthError = options.oauthError
  }
}

/** A 2xx answer whose body breaks the contract (not JSON, wrong shape, batch length differs). */
export class EnrichmentInvalidResponseError extends EnrichmentApiError {
  constructor(message: string, options: Omit<EnrichmentErrorOptions, 'retriable'>) {
    super(message, 'ENRICHMENT_INVALID_RESPONSE', { ...options, retriable: false })
  }
}

/** The caller's input cannot be sent (checked before any request): e.g. an empty or oversized batch. */
export class EnrichmentInputError extends EnrichmentApiError {
  constructor(message: string, options: { operation: string; details?: Record<string, unknown> }) {
    super(message, 'ENRICHMENT_INPUT_INVALID', { ...options, retriable: false, recordScoped: true })
  }
}
