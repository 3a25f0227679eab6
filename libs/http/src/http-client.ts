import { Agent, type Dispatcher } from 'undici'
import { classifyTransportError } from './classify-error.ts'
import {
  lowerKeys,
  positiveOption,
  SYSTEM_CLOCK,
  type HttpClientOptions,
  type HttpClock,
  type HttpHooks,
  type HttpLogger,
} from './client-options.ts'
import {
  HttpAbortedError,
  HttpConfigError,
  HttpRequestError,
  HttpResponseFormatError,
  HttpStatusError,
  type RequestContext,
} from './errors.ts'
import { buildQueryString, encodeQuery, redactUrl, type QueryParams } from './query-string.ts'
import { createRequestLimiter, type RequestLimiter } from './rate-limits.ts'
import {
  buildResponse,
  encodeBody,
  statusError,
  type Exchange,
  type HttpMethod,
  type HttpRequest,
  type HttpResponse,
} from './request-response.ts'
import { BodyTooLargeError, collectResponse, type CollectLimits } from './response-body.ts'
import { backoffDelayMs, parseRetryAfterMs, resolveRetryPolicy, type RetryPolicy } from './retry-policy.ts'
import { DEFAULT_TIMEOUTS, resolveTimeouts, type Timeouts } from './timeouts.ts'
import { MIN_TLS_VERSION, assertSecureUrl } from './transport-policy.ts'

const IDEMPOTENT_METHODS: ReadonlySet<HttpMethod> = new Set(['GET', 'HEAD', 'PUT', 'DELETE'])

/** Relative paths the request path joins without the URL parser: plain path characters, no `//`. */
const PLAIN_PATH = /^(?:\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})+)+\/?$/
/** `.` and `..` segments, which the URL parser would resolve. */
const DOT_SEGMENT = /\/\.{1,2}(?:\/|$)|%2e/i
/** Plain request paths remembered with their joined pathname (two regex tests per request saved). */
const PLAIN_PATH_CACHE_LIMIT = 256

interface Target {
  origin: string
  /** Path and query as sent on the request line. */
  path: string
  /** Redacted URL for errors, logs and hooks. */
  safeUrl: string
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
  readonly #bodyLimits: CollectLimits
  readonly #logger: HttpLogger | undefined
  readonly #clock: HttpClock
  readonly #random: () => number
  /** baseUrl's origin and path without trailing slashes, precomputed for the request path. */
  readonly #origin: string
  readonly #basePath: string
  /** Request paths found plain (PLAIN_PATH), with the pathname they join to. */
  readonly #plainPaths = new Map<string, string>()
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
    this.#bodyLimits = {
      okBytes: positiveOption('maxResponseBytes', options.maxResponseBytes, 32 * 1024 * 1024),
      errorBytes: positiveOption('maxErrorBodyBytes', options.maxErrorBodyBytes, 64 * 1024),
    }
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
    const sent = {
      targetBytes: Buffer.byteLength(target.path),
      bodyBytes: body === undefined ? 0 : Buffer.byteLength(body),
    }

    for (let attempt = 1; ; attempt++) {
      const context: RequestContext = {
        operation: req.operation,
        method: req.method,
        url: safeUrl,
        attempt,
        sent,
      }
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
        if (
          (exchange.status >= 200 && exchange.status < 300) ||
          req.accept?.(exchange.status, exchange.text) === true
        ) {
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
    // Without a signal nobody can give up while the job waits: no wrapper (an async
    // function and its promise per request).
    if (signal === undefined) return this.limiter.schedule(task)
    const run = this.limiter.schedule(async () => {
      // The caller may have given up while the job waited for a slot.
      if (signal.aborted) throw new HttpAbortedError(context, signal.reason)
      return task()
    })
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
    let pathname = this.#plainPaths.get(path)
    if (pathname === undefined && PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path)) {
      pathname = `${this.#basePath}${path}`
      // API clients send a handful of fixed routes; ids in paths would grow it: bounded.
      if (this.#plainPaths.size >= PLAIN_PATH_CACHE_LIMIT) this.#plainPaths.clear()
      this.#plainPaths.set(path, pathname)
    }
    if (pathname !== undefined) {
      const { query: qs, redacted } = encodeQuery(query)
      return {
        origin: this.#origin,
        path: qs === '' ? pathname : `${pathname}?${qs}`,
        safeUrl: `${this.#origin}${pathname}${redacted}`,
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
    const collector = collectResponse(
      this.#dispatcher,
      {
        origin: target.origin,
        path: target.path,
        method: req.method,
        headers,
        body,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyMs,
      },
      req.signal,
      this.#bodyLimits,
    )
    try {
      const exchange = await collector.done
      if (this.#hooks.onResponse !== undefined) {
        const durationMs = performance.now() - started
        const status = exchange.status
        this.#callHook('onResponse', () => this.#hooks.onResponse?.({ ...context, status, durationMs }))
      }
      return exchange
    } catch (err) {
      const status = collector.status === 0 ? undefined : collector.status
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

export { DEFAULT_TIMEOUTS }
