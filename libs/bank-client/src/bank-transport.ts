import {
  HttpClient,
  type HttpHooks,
  type HttpLogger,
  type HttpMethod,
  type QueryParams,
  type RateLimits,
  type RequestLimiter,
  type RetryPolicy,
  type Timeouts,
} from '@tep/http'
import { buildCobsHeaders, newRequestId, type UserContext } from './cobs-headers.ts'
import type { ContractDriftListener } from '@tep/observability'
import { BankInvalidArgumentError, BankProtocolError, BankUnexplainedUnauthorizedError } from './errors.ts'
import { toBankError, toBankTokenError, type FailedCall } from './error-mapping.ts'

/** An access token, or a function that returns the current one (called once per call). */
export type AccessTokenSource = string | (() => string | Promise<string>)

/** Per-call options of every API operation. */
export interface CallOptions {
  /** Overrides the client's default access-token source for this call. */
  accessToken?: AccessTokenSource
  /** The end user's context for the COBS User-* headers. */
  user?: UserContext
  signal?: AbortSignal
  /**
   * X-Request-ID to send (default: a new UUID). Pass your own to log it before the call;
   * every error of the call carries it as `requestId`.
   */
  requestId?: string
}

export interface TransportOptions {
  baseUrl: string
  baseUrlName: string
  clientId: string
  tppName: string | undefined
  tppIdentification: string | undefined
  accessToken: AccessTokenSource | undefined
  limiter: RequestLimiter | Partial<RateLimits> | undefined
  retry: Partial<RetryPolicy> | undefined
  timeouts: Partial<Timeouts> | undefined
  tls: { ca?: string | Buffer | ReadonlyArray<string | Buffer> } | undefined
  hooks: HttpHooks | undefined
  logger: HttpLogger | undefined
  now: () => Date
  onContractDrift: ContractDriftListener
}

export interface BankRequest {
  operation: string
  method: HttpMethod
  path: string
  query?: QueryParams
  json?: unknown
  form?: Record<string, string>
  headers?: Record<string, string>
  idempotent?: boolean
}

export interface BankResult<T> {
  body: T
  status: number
  requestId: string
}

/**
 * One bank interface over @tep/http: COBS headers per call, access token per call, and the
 * mapping of HTTP failures to the bank client's typed errors.
 */
export class BankTransport {
  readonly #http: HttpClient
  readonly #options: TransportOptions

  constructor(options: TransportOptions) {
    this.#options = options
    this.#http = new HttpClient({
      baseUrl: options.baseUrl,
      baseUrlName: options.baseUrlName,
      ...(options.limiter === undefined ? {} : { limiter: options.limiter }),
      ...(options.retry === undefined ? {} : { retry: options.retry }),
      ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
      ...(options.tls === undefined ? {} : { tls: options.tls }),
      ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      headers: { 'user-agent': 'tep-bank-client/0.1' },
    })
  }

  /** The absolute URL of `path` (for browser redirects). */
  url(path: string, query?: QueryParams): URL {
    return this.#http.resolveUrl(path, query)
  }

  /** An API call with a bearer token and the COBS headers. */
  async call<T>(
    req: BankRequest,
    options: CallOptions,
    failure: Partial<FailedCall> = {},
  ): Promise<BankResult<T>> {
    const requestId = options.requestId ?? newRequestId()
    const now = this.#options.now()
    const accessToken = await this.#resolveToken(options, req.operation)
    const headers = {
      ...buildCobsHeaders({
        requestId,
        clientId: this.#options.clientId,
        tppName: this.#options.tppName,
        tppIdentification: this.#options.tppIdentification,
        now,
        accessToken,
        user: options.user,
      }),
      ...req.headers,
    }
    try {
      const res = await this.#http.request({
        ...req,
        headers,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      })
      return {
        body: parseBody<T>(res.text, res.status, req.operation, requestId),
        status: res.status,
        requestId,
      }
    } catch (err) {
      const mapped = toBankError(err, { operation: req.operation, requestId, now, ...failure })
      if (mapped instanceof BankUnexplainedUnauthorizedError) {
        // The modelled bank always says why it refuses a token (COBS parameters.REASON).
        this.reportDrift({
          operation: req.operation,
          field: 'REASON',
          kind: mapped.reason === undefined ? 'bare-401' : 'unknown-401-reason',
          ...(mapped.reason === undefined ? {} : { detail: mapped.reason.slice(0, 40) }),
        })
      }
      throw mapped
    }
  }

  /** A token-endpoint call: form body, no bearer token. */
  async token<T>(
    req: BankRequest,
    grant: 'authorization_code' | 'refresh_token',
    signal?: AbortSignal,
  ): Promise<BankResult<T>> {
    const requestId = newRequestId()
    const now = this.#options.now()
    try {
      const res = await this.#http.request({
        ...req,
        headers: { 'X-Request-ID': requestId, 'Cache-Control': 'no-store' },
        ...(signal === undefined ? {} : { signal }),
      })
      return {
        body: parseBody<T>(res.text, res.status, req.operation, requestId),
        status: res.status,
        requestId,
      }
    } catch (err) {
      throw toBankTokenError(err, { operation: req.operation, requestId, now, grant })
    }
  }

  /** Tells the client's `onContractDrift` of an answer that differs from the modelled bank and was tolerated. */
  reportDrift(drift: { operation: string; field: string; kind: string; detail?: string }): void {
    this.#options.onContractDrift({ api: 'bank', ...drift })
  }

  async close(): Promise<void> {
    await this.#http.close()
  }

  async #resolveToken(options: CallOptions, operation: string): Promise<string> {
    const source = options.accessToken ?? this.#options.accessToken
    if (source === undefined) {
      throw new BankInvalidArgumentError(
        'accessToken',
        `${operation}: no access token; pass accessToken in the call options or in the client options`,
      )
    }
    const token = typeof source === 'string' ? source : await source()
    if (typeof token !== 'string' || token === '') {
      throw new BankInvalidArgumentError(
        'accessToken',
        `${operation}: the access-token provider returned no token`,
      )
    }
    return token
  }
}

function parseBody<T>(text: string, status: number, operation: string, requestId: string): T {
  if (text === '' && status === 204) return undefined as T
  try {
    return JSON.parse(text) as T
  } catch (cause) {
    throw new BankProtocolError(
      `${operation}: the bank answered ${status} with a body that is not JSON (X-Request-ID ${requestId})`,
      {
        operation,
        requestId,
        status,
        cause,
      },
    )
  }
}

/** Throws BankProtocolError unless `check` holds for the body: keeps malformed answers from spreading. */
export function expectShape<T>(
  result: BankResult<unknown>,
  operation: string,
  what: string,
  check: (body: unknown) => boolean,
): T {
  if (!check(result.body)) {
    throw new BankProtocolError(
      `${operation}: the bank's answer lacks ${what} (X-Request-ID ${result.requestId})`,
      {
        operation,
        requestId: result.requestId,
        status: result.status,
      },
    )
  }
  return result.body as T
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}
