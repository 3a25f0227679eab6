import type { SimClock } from '../core/sim-clock.ts'

export const AUTHORIZATION_OPERATIONS = ['GET /oauth2/authorize', 'POST /oauth2/authorize', 'POST /oauth2/token'] as const
export type AuthorizationOperation = (typeof AUTHORIZATION_OPERATIONS)[number]

/**
 * Fixed one-hour windows per (operation, client id) on the simulator clock: the
 * spec's "10000 per hour each" for the authorization operations. The first call
 * opens a window; when it is full the caller gets the seconds until it closes.
 */
export class HourlyRateLimiter {
  readonly #clock: SimClock
  #limit: number
  readonly #windows = new Map<string, { start: number; count: number }>()
  rejected = 0

  constructor(clock: SimClock, limitPerHour: number) {
    this.#clock = clock
    this.#limit = limitPerHour
  }

  get limitPerHour(): number {
    return this.#limit
  }

  /** Changes the limit and starts every window afresh. */
  setLimit(limitPerHour: number): void {
    if (!Number.isInteger(limitPerHour) || limitPerHour < 1) throw new RangeError(`limit per hour must be a positive integer, got ${limitPerHour}`)
    this.#limit = limitPerHour
    this.#windows.clear()
  }

  reset(): void {
    this.#windows.clear()
  }

  /** Counts one call; returns undefined when allowed, else the Retry-After seconds. */
  take(operation: AuthorizationOperation, clientId: string): number | undefined {
    const now = this.#clock.now()
    const key = `${operation}|${clientId}`
    let w = this.#windows.get(key)
    if (!w || now - w.start >= 3_600_000) {
      w = { start: now, count: 0 }
      this.#windows.set(key, w)
    }
    if (w.count >= this.#limit) {
      this.rejected++
      return Math.max(1, Math.ceil((w.start + 3_600_000 - now) / 1000))
    }
    w.count++
    return undefined
  }
}
