/**
 * The bank's notion of "now": wall-clock time plus an offset that tests and
 * operators move through `/__admin/clock`. Token expiry, the 90-day rules,
 * payment settlement and the visibility of generated transactions all read this
 * clock, so advancing it makes a day of new transactions appear and a 90-day
 * consent expire without waiting.
 */
export class SimClock {
  #offsetMs: number
  readonly #wallClock: () => number

  constructor(options: { offsetMs?: number; wallClock?: () => number } = {}) {
    this.#offsetMs = options.offsetMs ?? 0
    this.#wallClock = options.wallClock ?? Date.now
  }

  now(): number {
    return this.#wallClock() + this.#offsetMs
  }

  get offsetMs(): number {
    return this.#offsetMs
  }

  /** Moves the clock forward (never backward: generated history and issued tokens assume time only grows). */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`clock can only move forward, got advance of ${ms} ms`)
    this.#offsetMs += ms
  }

  /** Back to a given offset (admin reset only: everything that depends on time is reset with it). */
  resetOffset(offsetMs: number): void {
    this.#offsetMs = offsetMs
  }

  /** Sets the current time; refuses to go back in time for the reason above. */
  set(epochMs: number): void {
    const delta = epochMs - this.now()
    if (delta < 0) throw new RangeError(`clock can only move forward: ${new Date(epochMs).toISOString()} is before ${new Date(this.now()).toISOString()}`)
    this.#offsetMs += delta
  }
}

/** Parses `90d`, `15m`, `3600s`, `250ms`, `2h` into milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim())
  if (!m) throw new RangeError(`duration must look like 250ms, 30s, 15m, 2h or 90d, got ${JSON.stringify(text)}`)
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'ms' | 's' | 'm' | 'h' | 'd']
  return Math.round(Number(m[1]) * unit)
}
