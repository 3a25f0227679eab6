import { InvalidationPollerConfigError } from './errors.ts'

/**
 * The page size the poller asks for. The service's bounds are not published,
 * so a 400 that blames `pageSize` halves it (down to `min`); it is never grown
 * back automatically, because a size the service once refused would only be
 * refused again. A restart starts from the configured size.
 */
export class PageSize {
  private value: number
  readonly min: number

  constructor(initial: number, min = 1) {
    if (!Number.isInteger(initial) || initial < min)
      throw new InvalidationPollerConfigError(`page size must be an integer >= ${min}, got ${initial}`, {
        initial,
        min,
      })
    this.value = initial
    this.min = min
  }

  get current(): number {
    return this.value
  }

  /** Halves the size; returns false when it is already at the minimum. */
  halve(): boolean {
    if (this.value <= this.min) return false
    this.value = Math.max(this.min, Math.floor(this.value / 2))
    return true
  }
}
