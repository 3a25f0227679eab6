import {
  HttpClient,
  HttpConfigError,
  HttpStatusError,
  assertSecureUrl,
  createRequestLimiter,
  encodePathSegment,
  type HttpClock,
  type HttpHooks,
  type HttpLogger,
  type HttpRequest,
  type HttpResponse,
  type QueryParams,
  type RateLimits,
  type RequestLimiter,
  type RetryPolicy,
  type Timeouts,
} from '@tep/http'
import type { Dispatcher } from 'undici'
import {
  MAX_BATCH_SIZE,
  assertNoPan,
  cardInputToJson,
  cardInputToQuery,
  type CardTransactionInput,
} from './card-input.ts'
import { basicAuthorization, requestAccessToken, type EnrichmentCredentials } from './credentials.ts'
import { parseApiErrorBody, toEnrichmentError } from './error-mapping.ts'
import {
  EnrichmentAbortedError,
  EnrichmentInputError,
  EnrichmentInvalidResponseError,
  type EnrichmentUnauthorizedError,
} from './errors.ts'
import { toQueryParams } from './input-encoding.ts'
import type {
  BatchEntryResult,
  CompleteBatchEntryResult,
  CompleteFindResult,
  FindResult,
  InvalidationItemRange,
  InvalidationLevel,
  InvalidationPage,
  Merchant,
  Shop,
  Suggestion,
  SuggestionReceipt,
} from './model.ts'
import {
  parseBatch,
  parseCompleteBatch,
  parseCompleteFindResult,
  parseFindResult,
  parseInvalidationPage,
  parseItemRange,
  parseMerchant,
  parseShop,
  parseSuggestionReceipt,
  type ParseContext,
} from './response-parsing.ts'
import { TokenCache, type TokenRenewalPolicy } from './token-cache.ts'
import {
  TRANSFER_INPUT_FIELDS,
  TRANSFER_SCHEMES,
  type TransferInputByScheme,
  type TransferScheme,
} from './transfer-input.ts'

export interface EnrichmentClientOptions {
  /** ENRICHMENT_API_URL: the base URL, the part before `/v5`. */
  baseUrl: string
  /** ENRICHMENT_TOKEN_URL; defaults to `{baseUrl}/auth/protocol/openid-connect/token`. */
  tokenUrl?: string
  credentials: EnrichmentCredentials
  /** Path segment of the API version (default `v5`). */
  apiVersion?: string
  timeouts?: Partial<Timeouts>
  /** Merged over the HTTP core's DEFAULT_RETRY_POLICY. */
  retry?: Partial<RetryPolicy>
  /** Limits for this credential (a limiter is created), or a limiter shared with other clients of the same credential. */
  limits?: Partial<RateLimits> | RequestLimiter
  renewal?: Partial<TokenRenewalPolicy>
  hooks?: HttpHooks
  /** Extra trusted CA certificates (e.g. the simulator's self-signed one). */
  tls?: { ca?: string | Buffer | ReadonlyArray<string | Buffer> }
  logger?: HttpLogger
  /** Time source for token renewal and Retry-After dates, and the retry sleep. */
  clock?: HttpClock
  random?: () => number
  /** Replace the undici Agent (tests). */
  dispatcher?: Dispatcher
}

export interface InvalidationsQuery {
  /** Exclusive lower bound (the cursor); 0 reads from the first item. */
  fromId: number
  /** Inclusive upper bound; omitted = unbounded. */
  toId?: number
  /** Levels to include; omitted = all. */
  level?: readonly InvalidationLevel[]
  /** Items per page; omitted = the API's default. */
  pageSize?: number
}

export interface CallOptions {
  signal?: AbortSignal
}

interface CallSpec {
  operation: string
  method: 'GET' | 'POST'
  path: string
  query?: QueryParams
  json?: unknown
  idempotent?: boolean
  signal?: AbortSignal
}

const DEFAULT_TOKEN_PATH = '/auth/protocol/openid-connect/token'

/**
 * Typed client for every operation of the merchant enrichment API v5. One
 * instance per credential: it owns the token cache and the rate/concurrency
 * limiter of that credential. Lookups are never cached (spec limit 1).
 */
export class EnrichmentClient {
  readonly #http: HttpClient
  readonly #tokenHttp: HttpClient | undefined
  readonly #tokens: TokenCache | undefined
  readonly #basic: string | undefined
  readonly #prefix: string
  readonly #logger: HttpLogger | undefined
  readonly #ownsLimiter: boolean
  readonly #limiter: RequestLimiter
  /** Aborts a token request still running at close(): once closed, no caller can use the token. */
  readonly #closing = new AbortController()
  #wrapperWarned = false

  constructor(options: EnrichmentClientOptions) {
    const base = assertSecureUrl(options.baseUrl, 'ENRICHMENT_API_URL')
    const version = options.apiVersion ?? 'v5'
    if (!/^v\d+$/.test(version))
      throw new HttpConfigError(`apiVersion must look like "v5", got ${JSON.stringify(version)}`, {
        setting: 'apiVersion',
      })
    this.#prefix = `/${version}`
    this.#logger = options.logger
    const limits = options.limits
    if (limits !== undefined && 'schedule' in limits) {
      this.#limiter = limits
      this.#ownsLimiter = false
    } else {
      this.#limiter = createRequestLimiter(limits)
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
      limiter: this.#limiter,
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

  /** The limiter of this client's credential (share it with another client of the same credential). */
  get limiter(): RequestLimiter {
    return this.#limiter
  }

  // ---- card lookups ------------------------------------------------------

  /** GET /v5/shops/findByCardTransaction: the shop of one card transaction. */
  async findByCardTransaction(input: CardTransactionInput, options: CallOptions = {}): Promise<FindResult> {
    return this.#lookup(
      'enrichment.findByCardTransaction',
      '/shops/findByCardTransaction',
      input,
      options,
      parseFindResult,
    )
  }

  /** GET /v5/shops/complete/findByCardTransaction: as above, with the full shop and merchant. */
  async completeFindByCardTransaction(
    input: CardTransactionInput,
    options: CallOptions = {},
  ): Promise<CompleteFindResult> {
    return this.#lookup(
      'enrichment.completeFindByCardTransaction',
      '/shops/complete/findByCardTransaction',
      input,
      options,
      parseCompleteFindResult,
    )
  }

  /** POST /v5/shops/findByCardTransactionBatch: 1..500 transactions, results in request order. */
  async findByCardTransactionBatch(
    inputs: readonly CardTransactionInput[],
    options: CallOptions = {},
  ): Promise<BatchEntryResult[]> {
    return this.#batch(
      'enrichment.findByCardTransactionBatch',
      '/shops/findByCardTransactionBatch',
      inputs,
      options,
      parseBatch,
    )
  }

  /** POST /v5/shops/complete/findByCardTransactionBatch. */
  async completeFindByCardTransactionBatch(
    inputs: readonly CardTransactionInput[],
    options: CallOptions = {},
  ): Promise<CompleteBatchEntryResult[]> {
    return this.#batch(
      'enrichment.completeFindByCardTransactionBatch',
      '/shops/complete/findByCardTransactionBatch',
      inputs,
      options,
      parseCompleteBatch,
    )
  }

  // ---- transfer lookups --------------------------------------------------

  /** GET /v5/shops/findByBankTransfer/{scheme}: the shop receiving a bank transfer. */
  async findByBankTransfer<S extends TransferScheme>(
    scheme: S,
    input: TransferInputByScheme[S],
    options: CallOptions = {},
  ): Promise<FindResult> {
    if (!TRANSFER_SCHEMES.includes(scheme)) {
      throw new EnrichmentInputError(
        `enrichment.findByBankTransfer: unknown scheme ${JSON.stringify(scheme)}; use one of ${TRANSFER_SCHEMES.join(', ')}`,
        {
          operation: 'enrichment.findByBankTransfer',
        },
      )
    }
    const operation = `enrichment.findByBankTransfer.${scheme}`
    const query = toQueryParams(
      input,
      TRANSFER_INPUT_FIELDS[scheme] as ReadonlyArray<keyof TransferInputByScheme[S] & string>,
    )
    return this.#findGet(operation, `/shops/findByBankTransfer/${scheme}`, query, options, parseFindResult)
  }

  // ---- shops and merchants -----------------------------------------------

  /** GET /v5/shops/{id} by shop uid (preferred) or handle. 404 → EnrichmentNotFoundError. */
  async getShop(uidOrHandle: string, options: CallOptions = {}): Promise<Shop> {
    const operation = 'enrichment.getShop'
    this.#requireId(operation, 'uidOrHandle', uidOrHandle)
    const res = await this.#call({
      operation,
      method: 'GET',
      path: `/shops/${encodePathSegment(uidOrHandle)}`,
      ...signalOf(options),
    })
    return parseShop(this.#parseContext(operation, res), this.#json(operation, res))
  }

  /** GET /v5/merchants/{uid}. 404 → EnrichmentNotFoundError. */
  async getMerchant(uid: string, options: CallOptions = {}): Promise<Merchant> {
    const operation = 'enrichment.getMerchant'
    this.#requireId(operation, 'uid', uid)
    const res = await this.#call({
      operation,
      method: 'GET',
      path: `/merchants/${encodePathSegment(uid)}`,
      ...signalOf(options),
    })
    return parseMerchant(this.#parseContext(operation, res), this.#json(operation, res))
  }

  // ---- invalidations -----------------------------------------------------

  /** GET /v5/invalidations: one page after `fromId` (exclusive) up to `toId` (inclusive). */
  async getInvalidations(query: InvalidationsQuery, options: CallOptions = {}): Promise<InvalidationPage> {
    const operation = 'enrichment.getInvalidations'
    this.#checkInvalidationsQuery(operation, query)
    const res = await this.#call({
      operation,
      method: 'GET',
      path: '/invalidations',
      query: {
        fromId: query.fromId,
        toId: query.toId,
        level: query.level === undefined ? undefined : query.level.join(','),
        pageSize: query.pageSize,
      },
      ...signalOf(options),
    })
    return parseInvalidationPage(this.#parseContext(operation, res), this.#json(operation, res), {
      fromId: query.fromId,
      pageSize: query.pageSize,
    })
  }

  /**
   * Follows the invalidation feed page by page until the API reports no more
   * (or `toId` is reached), yielding each page. The next page starts after the
   * page's `paging.lastId`. Persist that cursor only once a page's effects are
   * durable: stopping the iteration early is safe.
   */
  async *iterateInvalidations(
    query: InvalidationsQuery,
    options: CallOptions = {},
  ): AsyncGenerator<InvalidationPage, void, undefined> {
    let fromId = query.fromId
    for (;;) {
      const page = await this.getInvalidations({ ...query, fromId }, options)
      yield page
      if (!page.paging.hasMore) return
      if (query.toId !== undefined && page.paging.lastId >= query.toId) return
      if (page.paging.lastId <= fromId) {
        throw new EnrichmentInvalidResponseError(
          `enrichment.getInvalidations: paging.lastId ${page.paging.lastId} does not advance past fromId ${fromId} while hasMore is true; stopping instead of looping`,
          { operation: 'enrichment.getInvalidations', details: { fromId, lastId: page.paging.lastId } },
        )
      }
      fromId = page.paging.lastId
    }
  }

  /** GET /v5/invalidations/item/range: the id range of items created at or after `from`. */
  async getInvalidationItemRange(
    query: { from: Date },
    options: CallOptions = {},
  ): Promise<InvalidationItemRange> {
    const operation = 'enrichment.getInvalidationItemRange'
    if (!(query.from instanceof Date) || Number.isNaN(query.from.getTime())) {
      throw new EnrichmentInputError(`${operation}: from must be a valid Date`, { operation })
    }
    const res = await this.#call({
      operation,
      method: 'GET',
      path: '/invalidations/item/range',
      query: { from: query.from.toISOString() },
      ...signalOf(options),
    })
    return parseItemRange(this.#parseContext(operation, res), this.#json(operation, res))
  }

  // ---- suggestions -------------------------------------------------------

  /** POST /v5/suggestions: report a data discrepancy. Not retried once sent (it is not idempotent). */
  async postSuggestion(suggestion: Suggestion, options: CallOptions = {}): Promise<SuggestionReceipt> {
    const operation = 'enrichment.postSuggestion'
    if (suggestion.original === undefined && suggestion.current === undefined) {
      throw new EnrichmentInputError(`${operation}: give original, current or both`, { operation })
    }
    if (typeof suggestion.suggestion !== 'string' || suggestion.suggestion.trim() === '') {
      throw new EnrichmentInputError(`${operation}: suggestion must be a non-empty text`, { operation })
    }
    if (suggestion.source !== 'partner' && suggestion.source !== 'user') {
      throw new EnrichmentInputError(
        `${operation}: source must be "partner" or "user", got ${JSON.stringify(suggestion.source)}`,
        { operation },
      )
    }
    const body = {
      ...(suggestion.original === undefined ? {} : { original: suggestion.original }),
      ...(suggestion.current === undefined ? {} : { current: suggestion.current }),
      suggestion: suggestion.suggestion,
      source: suggestion.source,
    }
    const res = await this.#call({
      operation,
      method: 'POST',
      path: '/suggestions',
      json: body,
      idempotent: false,
      ...signalOf(options),
    })
    return parseSuggestionReceipt(
      this.#parseContext(operation, res),
      res.text.trim() === '' ? undefined : this.#json(operation, res),
    )
  }

  /** Closes connection pools and the limiter (when this client created it). */
  async close(): Promise<void> {
    this.#tokens?.clear()
    // A token request nobody waits for any more (e.g. every caller aborted) would
    // otherwise hold close() until its own timeouts and retries run out.
    this.#closing.abort(new Error('the enrichment client was closed'))
    await this.#http.close()
    await this.#tokenHttp?.close()
    if (this.#ownsLimiter) await this.#limiter.stop()
  }

  // ---- internals ---------------------------------------------------------

  async #lookup<T>(
    operation: string,
    path: string,
    input: CardTransactionInput,
    options: CallOptions,
    parse: (ctx: ParseContext, body: unknown) => T,
  ): Promise<T | { status: 'notFound'; handle: undefined }> {
    assertNoPan(input, operation)
    return this.#findGet(operation, path, cardInputToQuery(input), options, parse)
  }

  /** A GET lookup: a 404 answer means "no shop", unless it says the route itself does not exist. */
  async #findGet<T>(
    operation: string,
    path: string,
    query: QueryParams,
    options: CallOptions,
    parse: (ctx: ParseContext, body: unknown) => T,
  ): Promise<T | { status: 'notFound'; handle: undefined }> {
    let res: HttpResponse
    try {
      res = await this.#call(
        { operation, method: 'GET', path, query, ...signalOf(options) },
        isLookupNotFound,
      )
    } catch (err) {
      if (err instanceof LookupNotFound) return { status: 'notFound', handle: undefined }
      throw err
    }
    return parse(this.#parseContext(operation, res), this.#json(operation, res))
  }

  async #batch<T>(
    operation: string,
    path: string,
    inputs: readonly CardTransactionInput[],
    options: CallOptions,
    parse: (ctx: ParseContext, body: unknown, expected: number, onWrapped: () => void) => T[],
  ): Promise<T[]> {
    if (!Array.isArray(inputs) || inputs.length < 1 || inputs.length > MAX_BATCH_SIZE) {
      throw new EnrichmentInputError(
        `${operation}: a batch holds 1 to ${MAX_BATCH_SIZE} transactions, got ${Array.isArray(inputs) ? inputs.length : typeof inputs}; split larger batches`,
        { operation },
      )
    }
    inputs.forEach((input, i) => assertNoPan(input, operation, i))
    const requests = inputs.map(cardInputToJson)
    // A lookup is a read: sending the batch twice is harmless, so it is retried like a GET.
    const res = await this.#call({
      operation,
      method: 'POST',
      path,
      json: { requests },
      idempotent: true,
      ...signalOf(options),
    })
    return parse(this.#parseContext(operation, res), this.#json(operation, res), inputs.length, () => {
      if (this.#wrapperWarned) return
      this.#wrapperWarned = true
      this.#logger?.warn(
        { operation },
        'enrichment batch answer came wrapped in {"data": [...]}; accepted, but the contract says a bare array',
      )
    })
  }

  /**
   * Sends one API call with the credential's Authorization. With OAuth, a 401
   * drops the token that was refused and the call is repeated once with a fresh
   * one; a second 401 is an EnrichmentUnauthorizedError.
   */
  async #call(spec: CallSpec, intercept?: (err: unknown) => boolean): Promise<HttpResponse> {
    const path = `${this.#prefix}${spec.path}`
    const request = (authorization: string): Promise<HttpResponse> => {
      // Assigned one by one rather than spread: this runs for every API call.
      const req: HttpRequest = {
        operation: spec.operation,
        method: spec.method,
        path,
        headers: { authorization },
      }
      if (spec.query !== undefined) req.query = spec.query
      if (spec.json !== undefined) req.json = spec.json
      if (spec.idempotent !== undefined) req.idempotent = spec.idempotent
      if (spec.signal !== undefined) req.signal = spec.signal
      return this.#http.request(req)
    }
    const handle = (err: unknown): never => {
      if (intercept?.(err)) throw new LookupNotFound()
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
      return await request(`Bearer ${token}`)
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
      return await request(`Bearer ${fresh}`)
    } catch (err) {
      if (err instanceof HttpStatusError && err.status === 401) {
        const mapped = toEnrichmentError(err, spec.operation) as EnrichmentUnauthorizedError
        mapped.message = `${mapped.message.replace(/ \(a retry will not help\)$/, '')}; refused again with a freshly issued token (a retry will not help)`
        throw mapped
      }
      return handle(err)
    }
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

  #requireId(operation: string, name: string, value: string): void {
    if (typeof value !== 'string' || value.trim() === '') {
      throw new EnrichmentInputError(
        `${operation}: ${name} must be a non-empty string, got ${JSON.stringify(value)}`,
        { operation },
      )
    }
  }

  #checkInvalidationsQuery(operation: string, q: InvalidationsQuery): void {
    const bad = (msg: string): never => {
      throw new EnrichmentInputError(`${operation}: ${msg}`, { operation })
    }
    if (!Number.isSafeInteger(q.fromId) || q.fromId < 0)
      bad(`fromId must be a non-negative integer, got ${String(q.fromId)}`)
    if (q.toId !== undefined && (!Number.isSafeInteger(q.toId) || q.toId < q.fromId))
      bad(`toId must be an integer >= fromId (${q.fromId}), got ${String(q.toId)}`)
    if (q.pageSize !== undefined && (!Number.isSafeInteger(q.pageSize) || q.pageSize < 1))
      bad(`pageSize must be a positive integer, got ${String(q.pageSize)}`)
    if (q.level !== undefined && q.level.length === 0)
      bad('level must name at least one level, or be omitted for all')
  }

  #parseContext(operation: string, res: HttpResponse): ParseContext {
    return { operation, method: res.method, url: res.url, status: res.status }
  }

  #json(operation: string, res: HttpResponse): unknown {
    try {
      return res.json()
    } catch (err) {
      throw toEnrichmentError(err, operation)
    }
  }
}

/** Internal signal: a lookup answered 404 that means "no shop". */
class LookupNotFound extends Error {}

/**
 * A 404 on a lookup is a "not found" answer, except when the API says the route
 * itself is unknown (or the body is not the API's error JSON, e.g. a proxy page):
 * that is a wrong base URL, and hiding it as "not found" would silently turn
 * every transaction into NOT_FOUND.
 */
function isLookupNotFound(err: unknown): boolean {
  if (!(err instanceof HttpStatusError) || err.status !== 404) return false
  if (err.bodyText.trim() === '') return true
  const api = parseApiErrorBody(err.bodyJson())
  return api !== undefined && api.code !== 'ROUTE_NOT_FOUND'
}

function signalOf(options: CallOptions): { signal?: AbortSignal } {
  return options.signal === undefined ? {} : { signal: options.signal }
}

export function createEnrichmentClient(options: EnrichmentClientOptions): EnrichmentClient {
  return new EnrichmentClient(options)
}
