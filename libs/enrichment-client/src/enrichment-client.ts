import {
  encodePathSegment,
  type HttpLogger,
  type HttpResponse,
  type QueryParams,
  type RequestLimiter,
} from '@tep/http'
import { ApiTransport, isLookupNotFound, type CallSpec } from './api-transport.ts'
import {
  MAX_BATCH_SIZE,
  assertNoPan,
  cardInputToJson,
  cardInputToQuery,
  type CardTransactionInput,
} from './card-input.ts'
import {
  signalOf,
  type CallOptions,
  type EnrichmentClientOptions,
  type InvalidationsQuery,
} from './client-options.ts'
import { toEnrichmentError } from './error-mapping.ts'
import { EnrichmentInputError, EnrichmentInvalidResponseError } from './errors.ts'
import { toQueryParams } from './input-encoding.ts'
import { parseInvalidationPage, parseItemRange } from './invalidation-parsing.ts'
import type {
  BatchEntryResult,
  CompleteBatchEntryResult,
  CompleteFindResult,
  FindResult,
  InvalidationItemRange,
  InvalidationPage,
  Merchant,
  Shop,
  Suggestion,
  SuggestionReceipt,
} from './model.ts'
import { parseMerchant, parseShop } from './entity-parsing.ts'
import { parseBatch, parseCompleteBatch, parseCompleteFindResult, parseFindResult } from './find-parsing.ts'
import {
  parseSuggestionReceipt,
  type ParseContext,
} from './response-parsing.ts'
import { AnswerDrift, type ReadContext } from './tolerant-reading.ts'
import {
  TRANSFER_INPUT_FIELDS,
  TRANSFER_SCHEMES,
  type TransferInputByScheme,
  type TransferScheme,
} from './transfer-input.ts'

/**
 * Typed client for every operation of the merchant enrichment API v5. One
 * instance per credential: it owns the token cache and the rate/concurrency
 * limiter of that credential (through its ApiTransport, api-transport.ts).
 * Lookups are never cached (spec limit 1).
 */
export class EnrichmentClient {
  readonly #api: ApiTransport
  readonly #logger: HttpLogger | undefined
  readonly #onContractDrift: EnrichmentClientOptions['onContractDrift']
  #wrapperWarned = false
  /** Where tolerated deviations of find, shop and merchant answers are reported (tolerant-reading.ts). */
  readonly #answerDrift: AnswerDrift | undefined

  constructor(options: EnrichmentClientOptions) {
    this.#api = new ApiTransport(options)
    this.#logger = options.logger
    this.#onContractDrift = options.onContractDrift
    this.#answerDrift = options.onContractDrift === undefined ? undefined : new AnswerDrift(options.onContractDrift)
  }

  /** The limiter of this client's credential (share it with another client of the same credential). */
  get limiter(): RequestLimiter {
    return this.#api.limiter
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

  /**
   * GET /v5/shops/complete/findByCardTransaction: as above, with the full shop and merchant.
   * An unpublished variant: a 404 may mean "no such operation", so it is thrown
   * (EnrichmentNotFoundError) for the caller to tell, never read as not found.
   */
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
      false,
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

  /**
   * GET /v5/shops/{id} by shop uid (preferred) or handle. 404 → EnrichmentNotFoundError.
   * An answer without `uid` gets the id asked for: ask by uid when the uid matters.
   */
  async getShop(uidOrHandle: string, options: CallOptions = {}): Promise<Shop> {
    const operation = 'enrichment.getShop'
    this.#requireId(operation, 'uidOrHandle', uidOrHandle)
    const res = await this.#api.call({
      operation,
      method: 'GET',
      path: `/shops/${encodePathSegment(uidOrHandle)}`,
      ...signalOf(options),
    })
    // An answer without `uid` is the shop asked for (rule 6: any value may be absent).
    return parseShop(this.#readContext(operation, res), this.#json(operation, res), 'body', uidOrHandle)
  }

  /** GET /v5/merchants/{uid}. 404 → EnrichmentNotFoundError. */
  async getMerchant(uid: string, options: CallOptions = {}): Promise<Merchant> {
    const operation = 'enrichment.getMerchant'
    this.#requireId(operation, 'uid', uid)
    const res = await this.#api.call({
      operation,
      method: 'GET',
      path: `/merchants/${encodePathSegment(uid)}`,
      ...signalOf(options),
    })
    return parseMerchant(this.#readContext(operation, res), this.#json(operation, res), 'body', uid)
  }

  // ---- invalidations -----------------------------------------------------

  /** GET /v5/invalidations: one page after `fromId` (exclusive) up to `toId` (inclusive). */
  async getInvalidations(query: InvalidationsQuery, options: CallOptions = {}): Promise<InvalidationPage> {
    const operation = 'enrichment.getInvalidations'
    this.#checkInvalidationsQuery(operation, query)
    const res = await this.#api.call({
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
    return parseInvalidationPage(
      this.#parseContext(operation, res),
      this.#json(operation, res),
      { fromId: query.fromId, pageSize: query.pageSize },
      this.#onContractDrift,
    )
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
    const res = await this.#api.call({
      operation,
      method: 'GET',
      path: '/invalidations/item/range',
      query: { from: query.from.toISOString() },
      ...signalOf(options),
    })
    return parseItemRange(this.#parseContext(operation, res), this.#json(operation, res), this.#onContractDrift)
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
    const res = await this.#api.call({
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
    await this.#api.close()
  }

  // ---- internals ---------------------------------------------------------

  async #lookup<T>(
    operation: string,
    path: string,
    input: CardTransactionInput,
    options: CallOptions,
    parse: (ctx: ReadContext, body: unknown) => T,
    notFoundOn404 = true,
  ): Promise<T | { status: 'notFound'; handle: undefined }> {
    assertNoPan(input, operation)
    return this.#findGet(operation, path, cardInputToQuery(input), options, parse, notFoundOn404)
  }

  /**
   * A GET lookup: a 404 answer means "no shop", unless it says the route itself
   * does not exist. With `notFoundOn404` false every 404 is thrown as
   * EnrichmentNotFoundError, for the caller to tell the two apart.
   */
  async #findGet<T>(
    operation: string,
    path: string,
    query: QueryParams,
    options: CallOptions,
    parse: (ctx: ReadContext, body: unknown) => T,
    notFoundOn404 = true,
  ): Promise<T | { status: 'notFound'; handle: undefined }> {
    const spec: CallSpec = { operation, method: 'GET', path, query }
    if (options.signal !== undefined) spec.signal = options.signal
    if (notFoundOn404) spec.accept = isLookupNotFound
    const res = await this.#api.call(spec)
    if (res.status === 404) return { status: 'notFound', handle: undefined }
    return parse(this.#readContext(operation, res), this.#json(operation, res))
  }

  async #batch<T>(
    operation: string,
    path: string,
    inputs: readonly CardTransactionInput[],
    options: CallOptions,
    parse: (ctx: ReadContext, body: unknown, expected: number, onWrapped: () => void) => T[],
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
    const res = await this.#api.call({
      operation,
      method: 'POST',
      path,
      json: { requests },
      idempotent: true,
      ...signalOf(options),
    })
    return parse(this.#readContext(operation, res), this.#json(operation, res), inputs.length, () => {
      if (this.#wrapperWarned) return
      this.#wrapperWarned = true
      this.#logger?.warn(
        { operation },
        'enrichment batch answer came wrapped in {"data": [...]}; accepted, but the contract says a bare array',
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

  /** As #parseContext, with where the tolerant readers of lookups and entities report drift. */
  #readContext(operation: string, res: HttpResponse): ReadContext {
    const ctx: ReadContext = { operation, method: res.method, url: res.url, status: res.status }
    if (this.#answerDrift !== undefined) ctx.drift = this.#answerDrift
    return ctx
  }

  #json(operation: string, res: HttpResponse): unknown {
    try {
      return res.json()
    } catch (err) {
      throw toEnrichmentError(err, operation)
    }
  }
}

export function createEnrichmentClient(options: EnrichmentClientOptions): EnrichmentClient {
  return new EnrichmentClient(options)
}
