import type {
  HttpClock,
  HttpHooks,
  HttpLogger,
  RateLimits,
  RequestLimiter,
  RetryPolicy,
  Timeouts,
} from '@tep/http'
import type { ContractDriftListener } from '@tep/observability'
import type { Dispatcher } from 'undici'
import type { EnrichmentCredentials } from './credentials.ts'
import type { InvalidationLevel } from './model.ts'
import type { TokenRenewalPolicy } from './token-cache.ts'

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
  /**
   * Told of every deviation of an answer that the client tolerated (a member in
   * another JSON type, an unknown member, an absent id): `createContractDriftRecorder`
   * of @tep/observability counts them in tep_api_contract_drift_total. Never awaited.
   */
  onContractDrift?: ContractDriftListener
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

/** `{ signal }` when the caller gave one, else nothing (the HTTP request then has no signal). */
export function signalOf(options: CallOptions): { signal?: AbortSignal } {
  return options.signal === undefined ? {} : { signal: options.signal }
}
