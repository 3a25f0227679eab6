import {
  HttpClient,
  HttpConfigError,
  HttpStatusError,
  assertSecureUrl,
  createRequestLimiter,
  type HttpLogger,
  type HttpRequest,
  type HttpResponse,
  type QueryParams,
  type RequestLimiter,
} from '@tep/http'
import type { EnrichmentClientOptions } from './client-options.ts'
import { basicAuthorization, requestAccessToken } from './credentials.ts'
import { parseApiErrorBody, toEnrichmentError } from './error-mapping.ts'
import { EnrichmentAbortedError, type EnrichmentUnauthorizedError } from './errors.ts'
import { TokenCache } from './token-cache.ts'
import { enrichmentTracer, tracedCall } from './call-tracing.ts'
import type { Tracer } from '@opentelemetry/api'

/** One API call as the operations describe it; the path is below the version prefix. */
export interface CallSpec {
  operation: string
  method: 'GET' | 'POST'
  path: string
  query?: QueryParams
  json?: unknown
  idempotent?: boolean
  signal?: AbortSignal
  /** Non-2xx answers returned as responses rather than thrown (HttpRequest.accept). */
  accept?: (status: number, text: string) => boolean
}

const DEFAULT_TOKEN_PATH = '/auth/protocol/openid-connect/token'

/**
 * The credential side of the enrichment client: the HTTP clients (one for the
 * API, one for the token endpoint), the limiter of the credential, the token
 * cache or the Basic authorization, and sending a call with the right
 * Authorization (renewing a refused token once). The typed operations live in
 * enrichment-client.ts.
 */
export class ApiTransport {
  readonly #http: HttpClient
  readonly #tokenHttp: HttpClient | undefined
  readonly #tokens: TokenCache | undefined
  readonly #basic: string | undefined
  readonly #prefix: string
  readonly #logger: HttpLogger | undefined
  readonly #ownsLimiter: boolean
  readonly limiter: RequestLimiter
  /**
   * The Authorization value of the last token: a bearer token is long (a JWT, often
   * 1 kB), and a value built per request is a new string that undici validates and
   * the socket write flattens again, every call.
   */
  #bearer: { token: string; header: string } | undefined
  /** Aborts a token request still running at close(): once closed, no caller can use the token. */
  readonly #closing = new AbortController()
  readonly #base: URL
  /** Set only when a tracer provider is installed: without one, a call does no tracing work. */
  readonly #tracer: Tracer | undefined = enrichmentTracer()

  constructor(options: EnrichmentClientOptions) {
    const base = assertSecureUrl(options.baseUrl, 'ENRICHMENT_API_URL')
    this.#base = base
    const version = options.apiVersion ?? 'v5'
    if (!/^v\d+$/.test(version))
      throw new HttpConfigError(`apiVersion must look like "v5", got ${JSON.stringify(version)}`, {
        setting: 'apiVersion',
      })
    this.#prefix = `/${version}`
    this.#logger = options.logger
    const limits = options.limits
    if (limits !== undefined && 'schedule' in limits) {
      this.limiter = limits
      this.#ownsLimiter = false
    } else {
      this.limiter = createRequestLimiter(limits)
      this.#ownsLimiter = true
    }
    const common = {
      ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
      ...(options.retry === undefined ? {} : { retry: options.retry }),
      ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
      ...(options.tls === undefined ? {} : { tls: options.tls }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.random === undefined ? {} : { random: options.random }),
      ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
    }
    this.#http = new HttpClient({
      baseUrl: base,
      baseUrlName: 'ENRICHMENT_API_URL',
      limiter: this.limiter,
      ...common,
    })

    const credentials = options.credentials
    if (credentials.type === 'oauth') {
      if (credentials.clientId === '' || credentials.clientSecret === '') {
        throw new HttpConfigError(
          'ENRICHMENT_CLIENT_ID and ENRICHMENT_CLIENT_SECRET must both be non-empty for OAuth client credentials',
          {
            setting: 'ENRICHMENT_CLIENT_ID',
          },
        )
      }
      const tokenUrl = assertSecureUrl(
        options.tokenUrl ?? `${base.href.replace(/\/+$/, '')}${DEFAULT_TOKEN_PATH}`,
        'ENRICHMENT_TOKEN_URL',
      )
      // The token endpoint has its own connection pool and limiter: token requests
      // must never queue behind the API requests that are waiting for a token.
      const tokenHttp = new HttpClient({
        baseUrl: tokenUrl.origin,
        baseUrlName: 'ENRICHMENT_TOKEN_URL',
        limiter: { maxConcurrent: 2 },
        ...common,
      })
      this.#tokenHttp = tokenHttp
      const { clientId, clientSecret } = credentials
      this.#tokens = new TokenCache(
        () => requestAccessToken(tokenHttp, tokenUrl.href, clientId, clientSecret, this.#closing.signal),
        {
          now: options.clock === undefined ? Date.now : () => options.clock!.now(),
          ...(options.renewal === undefined ? {} : { renewal: options.renewal }),
        },
      )
    } else {
      if (credentials.username === '')
        throw new HttpConfigError('ENRICHMENT_BASIC_USER must be non-empty for HTTP Basic', {
          setting: 'ENRICHMENT_BASIC_USER',
        })
      this.#basic = basicAuthorization(credentials.username, credentials.password)
    }
  }

  /** Closes connection pools and the limiter (when this transport created it). */
  async close(): Promise<void> {
    this.#tokens?.clear()
    // A token request nobody waits for any more (e.g. every caller aborted) would
    // otherwise hold close() until its own timeouts and retries run out.
    this.#closing.abort(new Error('the enrichment client was closed'))
    await this.#http.close()
    await this.#tokenHttp?.close()
    if (this.#ownsLimiter) await this.limiter.stop()
  }

  /**
   * Sends one API call with the credential's Authorization. With OAuth, a 401
   * drops the token that was refused and the call is repeated once with a fresh
   * one; a second 401 is an EnrichmentUnauthorizedError.
   */
  call(spec: CallSpec): Promise<HttpResponse> {
    if (this.#tracer === undefined) return this.#call(spec, undefined)
    const url = new URL(`${this.#base.href.replace(/\/+$/, '')}${this.#prefix}${spec.path}`)
    return tracedCall(this.#tracer, { operation: spec.operation, method: spec.method, url }, (traceHeaders) =>
      this.#call(spec, traceHeaders),
    )
  }

  async #call(spec: CallSpec, traceHeaders: Record<string, string> | undefined): Promise<HttpResponse> {
    const path = `${this.#prefix}${spec.path}`
    const request = (authorization: string): Promise<HttpResponse> => {
      // Assigned one by one rather than spread: this runs for every API call.
      const req: HttpRequest = {
        operation: spec.operation,
        method: spec.method,
        path,
        headers: traceHeaders === undefined ? { authorization } : { ...traceHeaders, authorization },
      }
      if (spec.query !== undefined) req.query = spec.query
      if (spec.json !== undefined) req.json = spec.json
      if (spec.idempotent !== undefined) req.idempotent = spec.idempotent
      if (spec.signal !== undefined) req.signal = spec.signal
      if (spec.accept !== undefined) req.accept = spec.accept
      return this.#http.request(req)
    }
    const handle = (err: unknown): never => {
      throw toEnrichmentError(err, spec.operation)
    }

    if (this.#tokens === undefined) {
      try {
        return await request(this.#basic!)
      } catch (err) {
        return handle(err)
      }
    }
    const token = this.#tokens.peek() ?? (await this.#token(spec))
    try {
      return await request(this.#bearerOf(token))
    } catch (err) {
      if (!(err instanceof HttpStatusError && err.status === 401)) return handle(err)
      this.#logger?.debug(
        { operation: spec.operation, apiError: parseApiErrorBody(err.bodyJson())?.code },
        'enrichment token refused; renewing once',
      )
      this.#tokens.invalidate(token)
    }
    const fresh = await this.#token(spec)
    try {
      return await request(this.#bearerOf(fresh))
    } catch (err) {
      if (err instanceof HttpStatusError && err.status === 401) {
        const mapped = toEnrichmentError(err, spec.operation) as EnrichmentUnauthorizedError
        mapped.message = `${mapped.message.replace(/ \(a retry will not help\)$/, '')}; refused again with a freshly issued token (a retry will not help)`
        throw mapped
      }
      return handle(err)
    }
  }

  #bearerOf(token: string): string {
    const last = this.#bearer
    if (last !== undefined && last.token === token) return last.header
    // V8 flattens it on its first write and keeps the flat form for the next requests.
    const header = `Bearer ${token}`
    this.#bearer = { token, header }
    return header
  }

  /**
   * The shared token; a caller whose signal fires stops waiting for it (the
   * token request itself goes on for the other callers).
   */
  async #token(spec: CallSpec): Promise<string> {
    const pending = this.#tokens!.get()
    const signal = spec.signal
    if (signal === undefined) return pending
    const aborted = (): EnrichmentAbortedError =>
      new EnrichmentAbortedError(
        `${spec.operation}: aborted by the caller while waiting for an access token`,
        {
          operation: spec.operation,
          cause: signal.reason,
        },
      )
    if (signal.aborted) throw aborted()
    return new Promise<string>((resolve, reject) => {
      const onAbort = (): void => reject(aborted())
      signal.addEventListener('abort', onAbort, { once: true })
      pending.then(
        (token) => {
          signal.removeEventListener('abort', onAbort)
          resolve(token)
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort)
          reject(err)
        },
      )
    })
  }
}

/**
 * A 404 on a lookup is a "not found" answer, except when the API says the route
 * itself is unknown (or the body is not the API's error JSON, e.g. a proxy page):
 * that is a wrong base URL, and hiding it as "not found" would silently turn
 * every transaction into NOT_FOUND. Given as CallSpec.accept, so that the common
 * "no shop" answer comes back as a response and only the wrong-URL one is thrown.
 */
export function isLookupNotFound(status: number, text: string): boolean {
  if (status !== 404) return false
  if (text.trim() === '') return true
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return false
  }
  const api = parseApiErrorBody(body)
  return api !== undefined && api.code !== 'ROUTE_NOT_FOUND'
}
