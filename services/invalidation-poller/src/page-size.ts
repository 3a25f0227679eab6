import { InvalidationPollerConfigError } from './errors.ts'

/** Successful pages at a reduced size after which the size is doubled again (back up to the configured one). */
export const PAGE_SIZE_RECOVERY_PAGES = 5

/**
 * The page size the poller asks for. The service's bounds are not published
 * ("Rate limits and the bounds of `pageSize`: not shown"), so a 400 that blames
 * `pageSize` halves it (down to `min`). It recovers: after
 * `PAGE_SIZE_RECOVERY_PAGES` successful pages it doubles, up to the configured
 * size, so one refusal (or a refusal of something else taken for one) does not
 * slow the poller until a restart. A size the service keeps refusing costs one
 * 400 per recovery.
 */
export class PageSize {
  private value: number
  private successes = 0
  readonly min: number
  readonly max: number
  readonly recoverAfter: number

  constructor(initial: number, min = 1, recoverAfter = PAGE_SIZE_RECOVERY_PAGES) {
    if (!Number.isInteger(initial) || initial < min)
      throw new InvalidationPollerConfigError(`page size must be an integer >= ${min}, got ${initial}`, {
        initial,
        min,
      })
    this.value = initial
    this.max = initial
    this.min = min
    this.recoverAfter = recoverAfter
  }

  get current(): number {
    return this.value
  }

  /** Halves the size; returns false when it is already at the minimum. */
  halve(): boolean {
    this.successes = 0
    if (this.value <= this.min) return false
    this.value = Math.max(this.min, Math.floor(this.value / 2))
    return true
  }

  /** A page was served at the current size; returns true when this grew the size. */
  succeeded(): boolean {
    if (this.value >= this.max) return false
    this.successes += 1
    if (this.successes < this.recoverAfter) return false
    this.successes = 0
    this.value = Math.min(this.max, this.value * 2)
    return true
  }
}
