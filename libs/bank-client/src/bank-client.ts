import {
  createRequestLimiter,
  type HttpHooks,
  type HttpLogger,
  type RateLimits,
  type RequestLimiter,
  type RetryPolicy,
  type Timeouts,
} from '@tep/http'
import { AccountsClient } from './accounts-client.ts'
import { CardsClient } from './balance-check.ts'
import { BankTransport, type AccessTokenSource } from './bank-transport.ts'
import type { ContractDriftListener } from '@tep/observability'
import { BankInvalidArgumentError } from './errors.ts'
import type { BankScope } from './model/tokens.ts'
import { OAuthClient } from './oauth-client.ts'
import { PaymentsClient } from './payments-client.ts'
import { DEFAULT_ACCESS_TOKEN_LIFETIME_MS } from './token-response.ts'
import type { SepaReachable } from './rules/payment-kind.ts'
import type { UnprocessedFieldPolicy } from './rules/standing-order.ts'

/**
 * The token endpoint allows 10000 calls per hour per operation. bottleneck refills its
 * reservoir in fixed windows, so any sliding hour can overlap 11 six-minute windows:
 * 11 × 900 = 9900 keeps under the limit however the windows fall.
 */
export const DEFAULT_AUTHORIZATION_LIMITS: Readonly<RateLimits> = Object.freeze({
  maxConcurrent: 4,
  minTimeMs: 0,
  perInterval: Object.freeze({ requests: 900, intervalMs: 6 * 60_000 }),
})

export type BankEndpoint = 'authorization' | 'accounts' | 'payments' | 'cards'

export interface BankClientOptions {
  /** The bank's base URL (`BANK_API_URL`): https://, or http:// to loopback (the simulator). */
  baseUrl: string
  /** Per-interface base URLs where they differ (e.g. a separate cards OAuth provider). */
  baseUrls?: Partial<Record<BankEndpoint | 'cardsAuthorization', string>>
  clientId: string
  clientSecret: string
  /** The registered redirect URI of the consent flow. */
  redirectUri: string
  /** `TPP-Name` header: the name of the original third party. */
  tppName: string
  /** `TPP-Identification` header: licence number, e.g. `CZ013574-15`. */
  tppIdentification?: string
  /** Default access token (or provider) of the API clients; calls may pass their own. */
  accessToken?: AccessTokenSource
  /** Retry policy of the API and token calls, merged over @tep/http's defaults. */
  retry?: Partial<RetryPolicy>
  timeouts?: Partial<Timeouts>
  /** Limits of the accounts, payments and cards calls (one limiter for this client id). */
  limits?: Partial<RateLimits> | RequestLimiter
  /** Limits of the token endpoint. Default DEFAULT_AUTHORIZATION_LIMITS. */
  authorizationLimits?: Partial<RateLimits> | RequestLimiter
  tls?: { ca?: string | Buffer | ReadonlyArray<string | Buffer> }
  hooks?: HttpHooks
  logger?: HttpLogger
  /** Clock for token expiry instants and the instant-payment date rule. Default: system clock. */
  now?: () => Date
  /** Standing-order fields the bank does not process: `drop` with a warning (default) or `refuse`. */
  unprocessedStandingOrderFields?: UnprocessedFieldPolicy
  /** Whether a creditor IBAN is SEPA reachable. Default: its country is in the SEPA scheme. */
  sepaReachable?: SepaReachable
  authorizePath?: string
  tokenPath?: string
  /**
   * Told of every answer that differs from the modelled bank and was tolerated (a token answer
   * without `expires_in`, a 401 without REASON, `/payments` served without its slash ...),
   * with `api: 'bank'`. bank-sync passes `createContractDriftRecorder(...).listener`.
   */
  onContractDrift?: ContractDriftListener
  /** Access-token lifetime assumed when a token answer gives none. Default DEFAULT_ACCESS_TOKEN_LIFETIME_MS (5 min). */
  defaultAccessTokenLifetimeMs?: number
}

export interface BankClient {
  readonly authorization: OAuthClient
  readonly accounts: AccountsClient
  readonly payments: PaymentsClient
  readonly cards: CardsClient
  /** Closes every connection pool (and the limiters this client created). */
  close(): Promise<void>
}

function required(name: string, value: string | undefined): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new BankInvalidArgumentError(name, `bank client option ${name} is required`)
  }
  return value
}

/** Builds the clients of the four bank interfaces over shared limiters. */
export function createBankClient(options: BankClientOptions): BankClient {
  const clientId = required('clientId', options.clientId)
  const clientSecret = required('clientSecret', options.clientSecret)
  const redirectUri = required('redirectUri', options.redirectUri)
  required('baseUrl', options.baseUrl)
  const now = options.now ?? (() => new Date())
  const onContractDrift = options.onContractDrift ?? (() => {})
  const defaultLifetime = options.defaultAccessTokenLifetimeMs ?? DEFAULT_ACCESS_TOKEN_LIFETIME_MS
  if (!Number.isFinite(defaultLifetime) || defaultLifetime < 0) {
    throw new BankInvalidArgumentError(
      'defaultAccessTokenLifetimeMs',
      `defaultAccessTokenLifetimeMs must be a non-negative number of ms, got ${String(defaultLifetime)}`,
    )
  }
  const apiLimiter = isLimiter(options.limits) ? options.limits : createRequestLimiter(options.limits ?? {})
  const authLimiter = isLimiter(options.authorizationLimits)
    ? options.authorizationLimits
    : createRequestLimiter({ ...DEFAULT_AUTHORIZATION_LIMITS, ...(options.authorizationLimits ?? {}) })
  const owned: RequestLimiter[] = []
  if (apiLimiter !== options.limits) owned.push(apiLimiter)
  if (authLimiter !== options.authorizationLimits) owned.push(authLimiter)

  const transports: BankTransport[] = []
  const make = (endpoint: BankEndpoint | 'cardsAuthorization', limiter: RequestLimiter): BankTransport => {
    const override = options.baseUrls?.[endpoint]
    const t = new BankTransport({
      baseUrl: override ?? options.baseUrl,
      baseUrlName: override === undefined ? 'BANK_API_URL' : `bank ${endpoint} URL`,
      clientId,
      tppName: options.tppName,
      tppIdentification: options.tppIdentification,
      accessToken: options.accessToken,
      limiter,
      retry: options.retry,
      timeouts: options.timeouts,
      tls: options.tls,
      hooks: options.hooks,
      logger: options.logger,
      now,
      onContractDrift,
    })
    transports.push(t)
    return t
  }
  const auth = make('authorization', authLimiter)
  const cardsAuth =
    options.baseUrls?.cardsAuthorization === undefined ? auth : make('cardsAuthorization', authLimiter)
  const authTransports: Record<BankScope, BankTransport> = { AISP: auth, PISP: auth, CISP: cardsAuth }

  return {
    authorization: new OAuthClient({
      transports: authTransports,
      clientId,
      clientSecret,
      redirectUri,
      authorizePath: options.authorizePath ?? '/oauth2/authorize',
      tokenPath: options.tokenPath ?? '/oauth2/token',
      now,
      defaultAccessTokenLifetimeMs: defaultLifetime,
      onContractDrift,
    }),
    accounts: new AccountsClient(make('accounts', apiLimiter)),
    payments: new PaymentsClient(make('payments', apiLimiter), {
      now,
      unprocessedStandingOrderFields: options.unprocessedStandingOrderFields ?? 'drop',
      kindOptions: options.sepaReachable === undefined ? {} : { sepaReachable: options.sepaReachable },
      logger: options.logger,
      onContractDrift,
    }),
    cards: new CardsClient(make('cards', apiLimiter)),
    async close() {
      await Promise.all(transports.map((t) => t.close()))
      await Promise.all(owned.map((l) => l.stop()))
    },
  }
}

function isLimiter(v: unknown): v is RequestLimiter {
  return v !== null && typeof v === 'object' && typeof (v as RequestLimiter).schedule === 'function'
}
