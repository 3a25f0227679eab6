import type { SimClock } from '../core/sim-clock.ts'
import { BankApiError } from '../errors.ts'

const DAY_MS = 86_400_000

/**
 * Optional PSD2 RTS art. 36(5) rule: without the user present (`User-Involved`
 * not `true`) an application may read an account at most N times per 24 hours.
 * Off unless configured, since the spec does not state it. A balance read and
 * page 0 of a transaction history count; further pages of the same pass do not.
 */
export class UnattendedAccessLimiter {
  readonly #clock: SimClock
  #perDay: number | undefined
  readonly #reads = new Map<string, number[]>()
  rejected = 0

  constructor(clock: SimClock, perDay: number | undefined) {
    this.#clock = clock
    this.#perDay = perDay
  }

  get perDay(): number | undefined {
    return this.#perDay
  }

  set(perDay: number | undefined): void {
    if (perDay !== undefined && (!Number.isInteger(perDay) || perDay < 1)) throw new RangeError(`unattended reads per day must be a positive integer or null, got ${perDay}`)
    this.#perDay = perDay
    this.#reads.clear()
  }

  /** Counts one unattended read of an account under a consent; throws 429 when the day's budget is used. */
  take(consentId: string, accountId: string): void {
    const limit = this.#perDay
    if (limit === undefined) return
    const now = this.#clock.now()
    const key = `${consentId}|${accountId}`
    const recent = (this.#reads.get(key) ?? []).filter((t) => now - t < DAY_MS)
    if (recent.length >= limit) {
      this.rejected++
      const retryAfter = Math.max(1, Math.ceil(((recent[0] as number) + DAY_MS - now) / 1000))
      this.#reads.set(key, recent)
      throw new BankApiError(
        429,
        {
          error: 'TOO_MANY_REQUESTS',
          scope: 'User-Involved',
          parameters: { REASON: 'UNATTENDED_ACCESS_LIMIT', LIMIT_PER_DAY: String(limit) },
          message: `at most ${limit} reads of this account per 24 hours without the user present (User-Involved: true lifts it)`,
        },
        { 'retry-after': String(retryAfter) },
      )
    }
    recent.push(now)
    this.#reads.set(key, recent)
  }
}
