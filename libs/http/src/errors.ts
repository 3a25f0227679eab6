import { PipelineError } from '@tep/errors'

/**
 * Errors of the shared HTTP core. API clients (enrichment, bank) catch these and
 * wrap or subclass them with their own codes; everything here names the operation
 * and a redacted URL (no query values, no credentials) so it can be logged as is.
 */

/** What every request-scoped error carries in `details`. */
export interface RequestContext {
  /** Logical operation name given by the caller, e.g. `enrichment.getShop`. */
  operation: string
  method: string
  /** Redacted URL: origin and path, query parameter names with their values hidden. */
  url: string
  /** 1-based attempt number that produced this error. */
  attempt: number
  /**
   * Sizes of what was sent: the request target (path and query) and the body, in
   * bytes. A 413/414 is only about the request's own content when these are large
   * (error mappings tell a proxy's limit from an oversized record by them).
   */
  sent?: { targetBytes: number; bodyBytes: number }
}

/** Invalid client or policy configuration, raised when the client is built. Never retriable. */
export class HttpConfigError extends PipelineError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { code: 'HTTP_CONFIG_INVALID', retriable: false, details })
  }
}

/**
 * A request never started because its limiter was stopped (the client was
 * closed): it was still waiting for a slot, or was scheduled afterwards. Not
 * retriable on this client.
 */
export class LimiterStoppedError extends PipelineError {
  constructor(message: string, cause?: unknown) {
    super(message, { code: 'HTTP_LIMITER_STOPPED', retriable: false, cause })
  }
}

/** Common parent of the request-scoped errors below. */
export class HttpRequestError extends PipelineError {
  readonly operation: string
  readonly method: string
  readonly url: string
  readonly attempt: number
  /** Sizes of what was sent (RequestContext.sent); undefined for a request never built. */
  readonly sent: RequestContext['sent']

  constructor(
    message: string,
    options: {
      code: string
      retriable: boolean
      cause?: unknown
      context: RequestContext
      details?: Record<string, unknown>
    },
  ) {
    super(message, {
      code: options.code,
      retriable: options.retriable,
      cause: options.cause,
      details: { ...options.context, ...options.details },
    })
    this.operation = options.context.operation
    this.method = options.context.method
    this.url = options.context.url
    this.attempt = options.context.attempt
    this.sent = options.context.sent
  }
}

/**
 * The connection failed or broke (refused, reset, DNS, closed mid-response).
 * `beforeSend` is true when the failure happened while establishing the connection,
 * so the server cannot have seen the request: only then is a non-idempotent request
 * safe to send again.
 */
export class HttpNetworkError extends HttpRequestError {
  readonly beforeSend: boolean
  /** The low-level error code (ECONNREFUSED, UND_ERR_SOCKET, ...). */
  readonly networkCode: string

  constructor(
    context: RequestContext,
    options: { cause: unknown; networkCode: string; beforeSend: boolean; code?: string; retriable?: boolean },
  ) {
    super(
      `${context.operation}: ${context.method} ${context.url} failed on the network (${options.networkCode})` +
        (options.beforeSend ? ' before the request was sent' : '') +
        ' (a retry can help once the server is reachable)',
      {
        code: options.code ?? 'HTTP_NETWORK_ERROR',
        retriable: options.retriable ?? true,
        cause: options.cause,
        context,
        details: { networkCode: options.networkCode, beforeSend: options.beforeSend },
      },
    )
    this.beforeSend = options.beforeSend
    this.networkCode = options.networkCode
  }
}

/**
 * TLS handshake or certificate verification failed (also: the server offers only
 * TLS older than 1.2). A configuration problem on one side; retrying does not help.
 */
export class HttpTlsError extends HttpNetworkError {
  constructor(context: RequestContext, options: { cause: unknown; networkCode: string }) {
    super(context, { ...options, beforeSend: true, code: 'HTTP_TLS_FAILED', retriable: false })
    this.message =
      `${context.operation}: TLS with ${context.url} failed (${options.networkCode}); ` +
      'check the server certificate, the trusted CA and that the server speaks TLS 1.2 or newer'
  }
}

export type TimeoutPhase = 'connect' | 'headers' | 'body'

/** No connection, no response headers or no body data within the configured time. Retriable. */
export class HttpTimeoutError extends HttpRequestError {
  readonly phase: TimeoutPhase
  readonly timeoutMs: number

  constructor(context: RequestContext, options: { cause: unknown; phase: TimeoutPhase; timeoutMs: number }) {
    super(
      `${context.operation}: ${context.method} ${context.url} timed out waiting for the ${options.phase} after ${options.timeoutMs} ms (a retry can help)`,
      {
        code: 'HTTP_TIMEOUT',
        retriable: true,
        cause: options.cause,
        context,
        details: { phase: options.phase, timeoutMs: options.timeoutMs },
      },
    )
    this.phase = options.phase
    this.timeoutMs = options.timeoutMs
  }
}

/** The caller's AbortSignal fired. Not retriable: the caller asked to stop. */
export class HttpAbortedError extends HttpRequestError {
  constructor(context: RequestContext, cause: unknown) {
    super(`${context.operation}: ${context.method} ${context.url} was aborted by the caller`, {
      code: 'HTTP_ABORTED',
      retriable: false,
      cause,
      context,
    })
  }
}

/** The response arrived but its body could not be read as promised (not JSON, too large). */
export class HttpResponseFormatError extends HttpRequestError {
  readonly status: number

  constructor(
    context: RequestContext,
    options: { status: number; reason: string; cause?: unknown; bodySnippet?: string },
  ) {
    super(
      `${context.operation}: ${context.method} ${context.url} returned ${options.status} with an unusable body: ${options.reason}`,
      {
        code: 'HTTP_RESPONSE_INVALID',
        retriable: false,
        cause: options.cause,
        context,
        details: { status: options.status, bodySnippet: options.bodySnippet },
      },
    )
    this.status = options.status
  }
}

/** Options for HttpStatusError. */
export interface HttpStatusErrorOptions {
  status: number
  retriable: boolean
  /** The first bytes of the body, for logs. */
  bodySnippet: string
  /** The body text (bounded by the client's `maxErrorBodyBytes`), for API clients to parse. */
  bodyText: string
  headers: Record<string, string | string[] | undefined>
  code?: string
}

/** A non-2xx answer. `retriable` follows the retry policy's status list. */
export class HttpStatusError extends HttpRequestError {
  readonly status: number
  readonly bodySnippet: string
  declare readonly bodyText: string
  readonly headers: Record<string, string | string[] | undefined>

  constructor(context: RequestContext, options: HttpStatusErrorOptions, message?: string) {
    super(
      message ??
        `${context.operation}: ${context.method} ${context.url} answered ${options.status}` +
          (options.retriable ? ' (a retry can help)' : ' (a retry will not help)') +
          (options.bodySnippet ? `: ${options.bodySnippet}` : ''),
      {
        code: options.code ?? 'HTTP_STATUS',
        retriable: options.retriable,
        context,
        details: { status: options.status, bodySnippet: options.bodySnippet },
      },
    )
    this.status = options.status
    this.bodySnippet = options.bodySnippet
    // Up to maxErrorBodyBytes (64 KiB) for the API clients to parse, but never logged: not
    // enumerable, so pino's error serializer (which walks enumerable properties) and
    // JSON.stringify write the bounded bodySnippet and leave this out.
    Object.defineProperty(this, 'bodyText', { value: options.bodyText, enumerable: false, writable: false, configurable: false })
    this.headers = options.headers
  }

  /** The body parsed as JSON, or undefined when it is not JSON. */
  bodyJson(): unknown {
    try {
      return JSON.parse(this.bodyText) as unknown
    } catch {
      return undefined
    }
  }
}

/** 429 Too Many Requests. `retryAfterMs` is the server's Retry-After, when it sent one. */
export class ThrottledError extends HttpStatusError {
  readonly retryAfterMs: number | undefined

  constructor(
    context: RequestContext,
    options: Omit<HttpStatusErrorOptions, 'status' | 'retriable' | 'code'> & {
      retryAfterMs: number | undefined
    },
  ) {
    super(
      context,
      { ...options, status: 429, retriable: true, code: 'HTTP_THROTTLED' },
      `${context.operation}: ${context.method} ${context.url} was throttled (429)` +
        (options.retryAfterMs === undefined ? '' : `, server asks to wait ${options.retryAfterMs} ms`) +
        '; retry later at a lower rate',
    )
    this.retryAfterMs = options.retryAfterMs
    this.details.retryAfterMs = options.retryAfterMs
  }
}
