import { SingleFlight } from '@tep/http'

/** A token as the cache keeps it. */
export interface AccessToken {
  value: string
  /** Lifetime the server announced, in ms. */
  lifetimeMs: number
}

/** When to renew, as data. */
export interface TokenRenewalPolicy {
  /** Renew once this fraction of the lifetime has passed... */
  lifetimeFraction: number
  /** ...or when less than this remains, whichever comes first. */
  minRemainingMs: number
}

export const DEFAULT_TOKEN_RENEWAL: Readonly<TokenRenewalPolicy> = Object.freeze({
  lifetimeFraction: 0.8,
  minRemainingMs: 30_000,
})

interface Cached {
  value: string
  renewAt: number
}

/**
 * Caches one access token and renews it ahead of expiry. Every caller shares one
 * in-flight token request (N concurrent calls at expiry cause one request), and a
 * failed request is not cached: the next caller tries again.
 *
 * Times are measured from when the token request was *sent*, so network delay
 * can only make the cache renew early, never late.
 */
export class TokenCache {
  readonly #fetch: () => Promise<AccessToken>
  readonly #now: () => number
  readonly #policy: TokenRenewalPolicy
  readonly #flight = new SingleFlight<'token', string>()
  #cached: Cached | undefined
  #generation = 0

  constructor(
    fetchToken: () => Promise<AccessToken>,
    options: { now?: () => number; renewal?: Partial<TokenRenewalPolicy> } = {},
  ) {
    this.#fetch = fetchToken
    this.#now = options.now ?? Date.now
    this.#policy = { ...DEFAULT_TOKEN_RENEWAL, ...options.renewal }
    const { lifetimeFraction, minRemainingMs } = this.#policy
    if (!(lifetimeFraction > 0 && lifetimeFraction <= 1))
      throw new RangeError(`token renewal lifetimeFraction must be in (0, 1], got ${lifetimeFraction}`)
    if (!(minRemainingMs >= 0))
      throw new RangeError(`token renewal minRemainingMs must be >= 0, got ${minRemainingMs}`)
  }

  /** A token valid for a while yet: the cached one, or a fresh one. */
  async get(): Promise<string> {
    return this.peek() ?? this.#renew()
  }

  /**
   * The cached token while it is not yet due for renewal, else undefined. Every
   * API call asks, so the common case answers synchronously, without a promise.
   */
  peek(): string | undefined {
    const cached = this.#cached
    return cached !== undefined && this.#now() < cached.renewAt ? cached.value : undefined
  }

  /**
   * Drops `rejected` (a token the API answered 401 to) so the next `get` fetches a
   * new one. A token other than the cached one is ignored: another caller already
   * replaced it, and concurrent 401s for the same token must cause one renewal.
   */
  invalidate(rejected: string): void {
    if (this.#cached?.value === rejected) this.#cached = undefined
  }

  /** Forgets the cached token (e.g. on shutdown). */
  clear(): void {
    this.#cached = undefined
    this.#generation++
  }

  #renew(): Promise<string> {
    return this.#flight.run('token', async () => {
      const generation = this.#generation
      const sentAt = this.#now()
      const token = await this.#fetch()
      const renewAfter = Math.max(
        0,
        Math.min(
          token.lifetimeMs * this.#policy.lifetimeFraction,
          token.lifetimeMs - this.#policy.minRemainingMs,
        ),
      )
      if (generation === this.#generation) this.#cached = { value: token.value, renewAt: sentAt + renewAfter }
      return token.value
    })
  }
}
