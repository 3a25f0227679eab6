/**
 * Requests per second per credential, as a token bucket refilled in real time
 * (the limit protects the process, so simulator clock shifts do not refill it).
 */
export class RateLimiter {
  readonly #perSecond: number
  readonly #buckets = new Map<string, { tokens: number; at: number }>()

  constructor(perSecond: number) {
    this.#perSecond = perSecond
  }

  /** 0 when the request may go on, otherwise the whole seconds to wait (at least 1). */
  take(key: string, now = performance.now()): number {
    let bucket = this.#buckets.get(key)
    if (bucket === undefined) {
      bucket = { tokens: this.#perSecond, at: now }
      this.#buckets.set(key, bucket)
    }
    bucket.tokens = Math.min(this.#perSecond, bucket.tokens + ((now - bucket.at) / 1000) * this.#perSecond)
    bucket.at = now
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return 0
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#perSecond))
  }

  clear(): void {
    this.#buckets.clear()
  }
}
