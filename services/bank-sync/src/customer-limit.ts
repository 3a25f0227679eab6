import { BankSyncError } from './errors.ts'

/**
 * At most `max` actions of one kind per customer in a fixed window, so one valid
 * customer token cannot use the gateway's whole share of the bank's token endpoint
 * (every callback is a code exchange) or flood the consents topic with starts.
 * Per replica, like the code-exchange budget it protects; memory is bounded by
 * dropping windows that have ended.
 */
export class CustomerLimit {
  readonly #max: number
  readonly #windowMs: number
  readonly #now: () => number
  readonly #windows = new Map<string, { startedAt: number; count: number }>()
  /** When the ended windows were last dropped: at most once per window length, not on every call. */
  #prunedAt = 0

  constructor(options: { max: number; windowMs: number; now?: () => number }) {
    if (!Number.isInteger(options.max) || options.max < 1) throw new RangeError(`max must be a positive integer, got ${options.max}`)
    if (!(options.windowMs > 0)) throw new RangeError(`windowMs must be positive, got ${options.windowMs}`)
    this.#max = options.max
    this.#windowMs = options.windowMs
    this.#now = options.now ?? Date.now
  }

  /** Counts one `kind` action of `customerId`, or throws CustomerLimitExceededError without counting it. */
  take(kind: 'start' | 'callback', customerId: string): void {
    const now = this.#now()
    if (this.#windows.size > 10_000 && now - this.#prunedAt >= this.#windowMs) this.#prune(now)
    const key = `${kind}\u0000${customerId}`
    let window = this.#windows.get(key)
    if (window === undefined || now - window.startedAt >= this.#windowMs) {
      window = { startedAt: now, count: 0 }
      this.#windows.set(key, window)
    }
    if (window.count >= this.#max) {
      throw new CustomerLimitExceededError(kind, this.#max, this.#windowMs, window.startedAt + this.#windowMs - now)
    }
    window.count++
  }

  #prune(now: number): void {
    this.#prunedAt = now
    for (const [key, w] of this.#windows) if (now - w.startedAt >= this.#windowMs) this.#windows.delete(key)
  }
}

export class CustomerLimitExceededError extends BankSyncError {
  readonly retryAfterMs: number

  constructor(kind: string, max: number, windowMs: number, retryAfterMs: number) {
    super(`too many consent ${kind}s for this customer (at most ${max} per ${Math.round(windowMs / 60_000)} min); try again later`, {
      code: 'CONSENT_CUSTOMER_LIMIT',
      retriable: true,
      details: { kind, max, windowMs },
    })
    this.retryAfterMs = Math.max(0, retryAfterMs)
  }
}
