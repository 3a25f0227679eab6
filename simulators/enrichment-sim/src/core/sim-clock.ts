/**
 * The simulator's notion of now: real time plus an offset that tests move through
 * `/__admin/clock`. Token expiry, invalidation timestamps and `currentTime` all
 * read this clock, so "wait 5 minutes" is an admin call, not a sleep.
 */
export class SimClock {
  #offsetMs = 0

  now(): number {
    return Date.now() + this.#offsetMs
  }

  get offsetMs(): number {
    return this.#offsetMs
  }

  advance(ms: number): void {
    this.#offsetMs += ms
  }

  setOffset(ms: number): void {
    this.#offsetMs = ms
  }

  /** Makes `now()` return `epochMs` at this moment (and run on from there). */
  set(epochMs: number): void {
    this.#offsetMs = epochMs - Date.now()
  }

  iso(): string {
    return new Date(this.now()).toISOString()
  }
}
