import { setTimeout as delay } from 'node:timers/promises'
import type { IncomingHttpHeaders } from 'node:http'
import { Agent, type Dispatcher } from 'undici'
import {
  HttpAbortedError,
  HttpConfigError,
  HttpRequestError,
  HttpResponseFormatError,
  HttpStatusError,
  ThrottledError,
  type RequestContext,
} from './errors.ts'
import { classifyTransportError } from './classify-error.ts'
import { buildQueryString, redactUrl, redactedQuery, type QueryParams } from './query-string.ts'
import { createRequestLimiter, type RateLimits, type RequestLimiter } from './rate-limits.ts'
import { backoffDelayMs, parseRetryAfterMs, resolveRetryPolicy, type RetryPolicy } from './retry-policy.ts'
import { DEFAULT_TIMEOUTS, resolveTimeouts, type Timeouts } from './timeouts.ts'
import { MIN_TLS_VERSION, assertSecureUrl } from './transport-policy.ts'

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** What the hooks receive about an attempt. */
export interface AttemptInfo {
  operation: string
  method: string
  /** Redacted URL (no query values). */
  url: string
  attempt: number
}

export interface ResponseInfo extends AttemptInfo {
  /** HTTP status, absent when the attempt failed without a response. */
  status?: number
  /** Error code of a failed attempt (HTTP_TIMEOUT, HTTP_NETWORK_ERROR, HTTP_STATUS...). */
  errorCode?: string
  /** Time from sending to the end of the body, excluding time queued in the limiter. */
  durationMs: number
}

export interface RetryInfo extends AttemptInfo {
  /** Wait before the next attempt. */
  delayMs: number
  /** The failure that caused the retry. */
  error: HttpRequestError
}

/**
 * Observability callbacks. They run synchronously on the request path, must be
 * cheap, and must not throw (a throwing hook is logged and ignored).
 */
export interface HttpHooks {
  onRequest?: (info: AttemptInfo) => void
  onResponse?: (info: ResponseInfo) => void
  onRetry?: (info: RetryInfo) => void
}

/** pino-compatible subset used by the library. */
export interface HttpLogger {
  warn(obj: object, msg?: string): void
  debug(obj: object, msg?: string): void
}

/** Time source and sleep, injectable so tests can run retries without waiting. */
export interface HttpClock {
  now(): number
  sleep(ms: number, signal?: AbortSignal): Promise<void>
}

export const SYSTEM_CLOCK: HttpClock = {
  now: () => Date.now(),
  sleep: (ms, signal) => delay(ms, undefined, signal === undefined ? undefined : { signal }),
}

export interface HttpClientOptions {
  /** Base URL every relative request path is appended to. https://, or http:// to loopback only. */
  baseUrl: string | URL
  /** Name of the setting baseUrl came from, used in configuration errors (e.g. `ENRICHMENT_API_URL`). */
  baseUrlName?: string
  timeouts?: Partial<Timeouts>
  retry?: Partial<RetryPolicy>
  /** A shared limiter for the credential, or limits for a limiter owned by this client. */
  limiter?: RequestLimiter | Partial<RateLimits>
  hooks?: HttpHooks
  /** Extra CA certificates to trust (e.g. a simulator's self-signed certificate). */
  tls?: { ca?: string | Buffer | ReadonlyArray<string | Buffer> }
  /** Headers sent with every request; `accept: application/json` unless overridden. */
  headers?: Readonly<Record<string, string>>
  /** Largest successful response body read, in bytes (default 32 MiB). */
  maxResponseBytes?: number
  /** Largest error response body kept for parsing, in bytes (default 64 KiB). */
  maxErrorBodyBytes?: number
  /**
   * Replace the undici Agent (tests: MockAgent, interceptors). The client then does not close it,
   * and the connect timeout, TLS minimum and `tls.ca` are the dispatcher's own.
   */
  dispatcher?: Dispatcher
  logger?: HttpLogger
  clock?: HttpClock
  /** Random source in [0, 1) for jitter. */
  random?: () => number
}

export interface HttpRequest {
  /** Logical name for logs, metrics and errors, e.g. `enrichment.getShop`. */
  operation: string
  method: HttpMethod
  /** Path appended to the base URL (starts with `/`), or an absolute URL checked by the transport policy. */
  path: string
  query?: QueryParams
  headers?: Readonly<Record<string, string>>
  /** JSON body (sent as application/json, never compressed). */
  json?: unknown
  /** Form body (application/x-www-form-urlencoded). */
  form?: Readonly<Record<string, string>>
  /**
   * Safe to send twice? Defaults to true for GET, HEAD, PUT, DELETE and false for
   * POST and PATCH. Non-idempotent requests are retried only when the connection
   * could not be established (the server never saw them). Reads sent as POST
   * (batch lookups) pass true.
   */
  idempotent?: boolean
  signal?: AbortSignal
  /** Per-request override of the client's retry policy. */
  retry?: Partial<RetryPolicy>
}

export interface HttpResponse {
  /** The request's operation, method and redacted URL, for messages about this response. */
  operation: string
  method: string
  url: string
  status: number
  headers: IncomingHttpHeaders
  /** The body as UTF-8 text. */
  text: string
  /** Attempts it took (1 = no retry). */
  attempts: number
  /** Parses the body as JSON; throws HttpResponseFormatError when it is not. */
  json<T = unknown>(): T
}

const IDEMPOTENT_METHODS: ReadonlySet<HttpMethod> = new Set(['GET', 'HEAD', 'PUT', 'DELETE'])
const SNIPPET_CHARS = 300

/** Relative paths the request path joins without the URL parser: plain path characters, no `//`. */
const PLAIN_PATH = /^(?:\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+)+\/?$/
/** `.` and `..` segments, which the URL parser would resolve. */
const DOT_SEGMENT = /\/\.{1,2}(?:\/|$)|%2e/i

interface Target {
  origin: string
  /** Path and query as sent on the request line. */
  path: string
  /** Redacted URL for errors, logs and hooks. */
  safeUrl: string
}

interface Exchange {
  status: number
  headers: IncomingHttpHeaders
  text: string
}

class BodyTooLargeError extends Error {
  readonly limit: number
  constructor(limit: number) {
    super(`response body exceeds ${limit} bytes`)
    this.limit = limit
  }
}

/**
 * The shared HTTP core: keep-alive connection pools (undici Agent, one pool per
 * origin), TLS 1.2+ / loopback-only plain HTTP, timeouts, retries with backoff and
 * Retry-After, a per-credential limiter and observability hooks. API clients build
 * on `request` and map HttpStatusError to their own error types.
 */
export class HttpClient {
  readonly baseUrl: URL
  readonly retryPolicy: Readonly<RetryPolicy>
  readonly timeouts: Readonly<Timeouts>
  readonly limiter: RequestLimiter

  readonly #dispatcher: Dispatcher
  readonly #ownsDispatcher: boolean
  readonly #ownsLimiter: boolean
  readonly #hooks: HttpHooks
  readonly #headers: Record<string, string>
  readonly #maxResponseBytes: number
  readonly #maxErrorBodyBytes: number
  readonly #logger: HttpLogger | undefined
  readonly #clock: HttpClock
  readonly #random: () => number
  /** baseUrl's origin and path without trailing slashes, precomputed for the request path. */
  readonly #origin: string
  readonly #basePath: string
  #closed = false

  constructor(options: HttpClientOptions) {
    this.baseUrl = assertSecureUrl(options.baseUrl, options.baseUrlName ?? 'baseUrl')
    if (this.baseUrl.search !== '' || this.baseUrl.hash !== '') {
      throw new HttpConfigError(
        `${options.baseUrlName ?? 'baseUrl'} must not carry a query or fragment, got ${redactUrl(this.baseUrl)}`,
        {
          setting: options.baseUrlName ?? 'baseUrl',
        },
      )
    }
    this.#origin = this.baseUrl.origin
    this.#basePath = this.baseUrl.pathname.replace(/\/+$/, '')
    this.retryPolicy = Object.freeze(resolveRetryPolicy(options.retry))
    this.timeouts = Object.freeze(resolveTimeouts(options.timeouts))
    const limiter = options.limiter
    if (limiter !== undefined && 'schedule' in limiter) {
      this.limiter = limiter
      this.#ownsLimiter = false
    } else {
      this.limiter = createRequestLimiter(limiter)
      this.#ownsLimiter = true
    }
    this.#maxResponseBytes = positiveOption('maxResponseBytes', options.maxResponseBytes, 32 * 1024 * 1024)
    this.#maxErrorBodyBytes = positiveOption('maxErrorBodyBytes', options.maxErrorBodyBytes, 64 * 1024)
    if (options.dispatcher !== undefined) {
      this.#dispatcher = options.dispatcher
      this.#ownsDispatcher = false
    } else {
      this.#dispatcher = new Agent({
        // Keep-alive is undici's default; these bound how long idle sockets live.
        keepAliveTimeout: 4_000,
        keepAliveMaxTimeout: 600_000,
        connect: {
          timeout: this.timeouts.connectMs,
          minVersion: MIN_TLS_VERSION,
          ...(options.tls?.ca === undefined
            ? {}
            : { ca: options.tls.ca as string | Buffer | Array<string | Buffer> }),
        },
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyMs,
      })
      this.#ownsDispatcher = true
    }
    this.#hooks = options.hooks ?? {}
    this.#headers = {
      accept: 'application/json',
      'user-agent': 'tep-http/0.1',
      ...lowerKeys(options.headers ?? {}),
    }
    this.#logger = options.logger
    this.#clock = options.clock ?? SYSTEM_CLOCK
    this.#random = options.random ?? Math.random
  }

  /** Resolves a request path against the base URL (absolute URLs are checked by the transport policy). */
  resolveUrl(path: string, query?: QueryParams): URL {
    let url: URL
    if (/^[a-z][a-z0-9+.-]*:/i.test(path)) {
      url = assertSecureUrl(path, 'request URL')
    } else {
      if (!path.startsWith('/'))
        throw new HttpConfigError(`request path must start with "/", got ${JSON.stringify(path)}`)
      url = new URL(this.baseUrl.href)
      url.pathname = `${this.#basePath}${path}`
    }
    const qs = buildQueryString(query)
    if (qs !== '') url.search = `?${qs}`
    return url
  }

  /**
   * Sends a request with retries. Resolves with the 2xx response; rejects with an
   * HttpRequestError subclass (HttpStatusError / ThrottledError for other statuses).
   */
  async request(req: HttpRequest): Promise<HttpResponse> {
    if (this.#closed) throw new HttpConfigError(`${req.operation}: the HTTP client is closed`)
    const target = this.#target(req.path, req.query)
    const safeUrl = target.safeUrl
    const policy =
      req.retry === undefined ? this.retryPolicy : resolveRetryPolicy({ ...this.retryPolicy, ...req.retry })
    const idempotent = req.idempotent ?? IDEMPOTENT_METHODS.has(req.method)
    const { body, contentType } = encodeBody(req)
    const headers: Record<string, string> = { ...this.#headers }
    if (req.headers !== undefined)
      for (const [name, value] of Object.entries(req.headers)) headers[name.toLowerCase()] = value
    if (contentType !== undefined) headers['content-type'] = contentType

    for (let attempt = 1; ; attempt++) {
      const context: RequestContext = { operation: req.operation, method: req.method, url: safeUrl, attempt }
      if (req.signal?.aborted) throw new HttpAbortedError(context, req.signal.reason)
      // A retry has already waited out its own Retry-After; a new request honours
      // the credential-wide pause another request was told about.
      // Checked before calling: the common no-pause case then costs no promise.
      if (attempt === 1 && (this.limiter.resumeAt ?? 0) > this.#clock.now())
        await this.#waitForCredentialPause(context, req.signal)
      let error: HttpRequestError
      let retryAfterMs: number | undefined
      try {
        const exchange = await this.#scheduled(req.signal, context, () =>
          this.#exchange(target, req, headers, body, context),
        )
        if (exchange.status >= 200 && exchange.status < 300) {
          return buildResponse(exchange, attempt, context)
        }
        retryAfterMs = policy.honorRetryAfter
          ? parseRetryAfterMs(exchange.headers['retry-after'], this.#clock.now())
          : undefined
        if (retryAfterMs !== undefined && (exchange.status === 429 || exchange.status === 503)) {
          this.limiter.pauseUntil?.(this.#clock.now() + Math.min(retryAfterMs, policy.maxRetryAfterMs))
        }
        error = statusError(exchange, context, policy, retryAfterMs)
      } catch (err) {
        error = this.#toRequestError(err, context, req.signal)
      }

      if (!this.#mayRetryInline(error, idempotent, policy) || attempt > policy.retries) throw error
      let waitMs = backoffDelayMs(policy, attempt, this.#random)
      if (retryAfterMs !== undefined) {
        // Waiting less than the server asked for only earns another 429/503.
        if (retryAfterMs > policy.maxRetryAfterMs) throw error
        waitMs = Math.max(waitMs, retryAfterMs)
      }
      if (this.#hooks.onRetry !== undefined)
        this.#callHook('onRetry', () => this.#hooks.onRetry?.({ ...context, delayMs: waitMs, error }))
      this.#logger?.debug({ ...context, delayMs: waitMs, code: error.code }, 'retrying HTTP request')
      try {
        await this.#clock.sleep(waitMs, req.signal)
      } catch (cause) {
        throw new HttpAbortedError(context, req.signal?.reason ?? cause)
      }
    }
  }

  /** Stops the limiter (if this client owns it) and closes idle connections. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    if (this.#ownsLimiter) await this.limiter.stop()
    if (this.#ownsDispatcher) await this.#dispatcher.close()
  }

  async #waitForCredentialPause(context: RequestContext, signal: AbortSignal | undefined): Promise<void> {
    const waitMs = (this.limiter.resumeAt ?? 0) - this.#clock.now()
    if (waitMs <= 0) return
    this.#logger?.debug({ ...context, waitMs }, 'credential paused by Retry-After; waiting before sending')
    try {
      await this.#clock.sleep(waitMs, signal)
    } catch (cause) {
      throw new HttpAbortedError(context, signal?.reason ?? cause)
    }
  }

  #mayRetryInline(error: HttpRequestError, idempotent: boolean, policy: RetryPolicy): boolean {
    if (!error.retriable) return false
    if (error instanceof HttpStatusError) return idempotent && policy.retryStatuses.includes(error.status)
    const beforeSend = 'beforeSend' in error && error.beforeSend === true
    const connectTimeout = 'phase' in error && error.phase === 'connect'
    if (error.code === 'HTTP_TIMEOUT') return policy.retryTimeouts && (idempotent || connectTimeout)
    if (error.code === 'HTTP_NETWORK_ERROR') return policy.retryNetworkErrors && (idempotent || beforeSend)
    return false
  }

  async #scheduled(
    signal: AbortSignal | undefined,
    context: RequestContext,
    task: () => Promise<Exchange>,
  ): Promise<Exchange> {
    const run = this.limiter.schedule(async () => {
      // The caller may have given up while the job waited for a slot.
      if (signal?.aborted) throw new HttpAbortedError(context, signal.reason)
      return task()
    })
    if (signal === undefined) return run
    return new Promise<Exchange>((resolve, reject) => {
      const onAbort = (): void => reject(new HttpAbortedError(context, signal.reason))
      signal.addEventListener('abort', onAbort, { once: true })
      run.then(
        (value) => {
          signal.removeEventListener('abort', onAbort)
          resolve(value)
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort)
          reject(err)
        },
      )
    })
  }

  /**
   * Origin, path with query, and the redacted URL of a request. A relative path of
   * plain URL path characters (what API clients send: fixed routes and
   * encodePathSegment ids) is joined as a string; anything else goes through the
   * WHATWG URL parser (resolveUrl), whose result the string join equals for the
   * plain case. Building and re-parsing a URL per request was a large share of
   * the client's own CPU time.
   */
  #target(path: string, query: QueryParams | undefined): Target {
    if (PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path)) {
      const pathname = `${this.#basePath}${path}`
      const qs = buildQueryString(query)
      return {
        origin: this.#origin,
        path: qs === '' ? pathname : `${pathname}?${qs}`,
        safeUrl: `${this.#origin}${pathname}${redactedQuery(query)}`,
      }
    }
    const url = this.resolveUrl(path, query)
    return { origin: url.origin, path: `${url.pathname}${url.search}`, safeUrl: redactUrl(url) }
  }

  async #exchange(
    target: Target,
    req: HttpRequest,
    headers: Record<string, string>,
    body: string | undefined,
    context: RequestContext,
  ): Promise<Exchange> {
    if (this.#hooks.onRequest !== undefined)
      this.#callHook('onRequest', () => this.#hooks.onRequest?.({ ...context }))
    const started = performance.now()
    let status: number | undefined
    try {
      const res = await this.#dispatcher.request({
        origin: target.origin,
        path: target.path,
        method: req.method,
        headers,
        body,
        signal: req.signal,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyMs,
      })
      status = res.statusCode
      const ok = status >= 200 && status < 300
      const text = await readBody(
        res,
        req.method === 'HEAD',
        ok ? this.#maxResponseBytes : this.#maxErrorBodyBytes,
        !ok,
      )
      if (this.#hooks.onResponse !== undefined) {
        const durationMs = performance.now() - started
        this.#callHook('onResponse', () => this.#hooks.onResponse?.({ ...context, status, durationMs }))
      }
      return { status: res.statusCode, headers: res.headers, text }
    } catch (err) {
      const error =
        err instanceof BodyTooLargeError
          ? new HttpResponseFormatError(context, { status: status ?? 0, reason: err.message, cause: err })
          : this.#toRequestError(err, context, req.signal)
      const durationMs = performance.now() - started
      this.#callHook('onResponse', () =>
        this.#hooks.onResponse?.({
          ...context,
          ...(status === undefined ? {} : { status }),
          errorCode: error.code,
          durationMs,
        }),
      )
      throw error
    }
  }

  #toRequestError(err: unknown, context: RequestContext, signal: AbortSignal | undefined): HttpRequestError {
    if (err instanceof HttpRequestError) return err
    if (signal?.aborted) return new HttpAbortedError(context, signal.reason)
    const classified = classifyTransportError(err, context, this.timeouts)
    if (classified === undefined) throw err
    return classified
  }

  #callHook(name: string, call: () => void): void {
    try {
      call()
    } catch (err) {
      this.#logger?.warn({ hook: name, err }, 'HTTP hook threw; ignored')
    }
  }
}

/** Creates an HttpClient; see HttpClientOptions for the defaults. */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  return new HttpClient(options)
}

function positiveOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1)
    throw new HttpConfigError(`${name} must be a positive integer, got ${String(value)}`, { setting: name })
  return value
}

function lowerKeys(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v
  return out
}

function encodeBody(req: HttpRequest): { body: string | undefined; contentType: string | undefined } {
  if (req.json !== undefined && req.form !== undefined) {
    throw new HttpConfigError(`${req.operation}: a request has either a json or a form body, not both`)
  }
  if (req.json !== undefined) return { body: JSON.stringify(req.json), contentType: 'application/json' }
  if (req.form !== undefined)
    return {
      body: new URLSearchParams(req.form).toString(),
      contentType: 'application/x-www-form-urlencoded',
    }
  return { body: undefined, contentType: undefined }
}

async function readBody(
  res: Dispatcher.ResponseData,
  head: boolean,
  limit: number,
  truncate: boolean,
): Promise<string> {
  const body = res.body
  // A HEAD answer's Content-Length describes the body a GET would get; it has none.
  const header = head ? undefined : res.headers['content-length']
  const length = typeof header === 'string' && /^[0-9]+$/.test(header) ? Number(header) : undefined
  if (length !== undefined && length <= limit) {
    // The framing bounds the body, so undici's own collector can read it: much
    // cheaper per response than iterating the stream asynchronously.
    const bytes = await body.bytes()
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
  }
  if (length !== undefined && !truncate) {
    // Nobody reads this stream, so the AbortError its destruction emits needs a listener.
    body.on('error', ignore)
    body.destroy()
    throw new BodyTooLargeError(limit)
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    const buf = chunk as Buffer
    if (size + buf.length > limit) {
      if (!truncate) {
        body.destroy()
        throw new BodyTooLargeError(limit)
      }
      chunks.push(buf.subarray(0, limit - size))
      size = limit
      // Error bodies only need their start; drop the rest without reading it.
      body.destroy()
      break
    }
    chunks.push(buf)
    size += buf.length
  }
  return Buffer.concat(chunks, size).toString('utf8')
}

function ignore(): void {}

function statusError(
  exchange: Exchange,
  context: RequestContext,
  policy: RetryPolicy,
  retryAfterMs: number | undefined,
): HttpStatusError {
  const bodySnippet =
    exchange.text.length > SNIPPET_CHARS ? `${exchange.text.slice(0, SNIPPET_CHARS)}...` : exchange.text
  const base = { bodySnippet, bodyText: exchange.text, headers: exchange.headers }
  if (exchange.status === 429) return new ThrottledError(context, { ...base, retryAfterMs })
  return new HttpStatusError(context, {
    ...base,
    status: exchange.status,
    retriable: policy.retryStatuses.includes(exchange.status),
  })
}

function buildResponse(exchange: Exchange, attempts: number, context: RequestContext): HttpResponse {
  return {
    operation: context.operation,
    method: context.method,
    url: context.url,
    status: exchange.status,
    headers: exchange.headers,
    text: exchange.text,
    attempts,
    json<T>(): T {
      try {
        return JSON.parse(exchange.text) as T
      } catch (cause) {
        const snippet = exchange.text.slice(0, SNIPPET_CHARS)
        throw new HttpResponseFormatError(
          { ...context, attempt: attempts },
          { status: exchange.status, reason: 'body is not valid JSON', cause, bodySnippet: snippet },
        )
      }
    },
  }
}

export { DEFAULT_TIMEOUTS }
