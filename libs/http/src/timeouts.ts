import { HttpConfigError } from './errors.ts'

/** Per-attempt time limits, in ms. */
export interface Timeouts {
  /** TCP + TLS connection establishment. */
  connectMs: number
  /** From sending the request to the end of the response headers. */
  headersMs: number
  /** Longest gap between two chunks of the response body. */
  bodyMs: number
}

/**
 * Defaults sized for a service that answers in milliseconds (the enrichment API
 * advertises ~3 ms): a connect that takes seconds means a network problem, and a
 * 500-entry batch still answers well within 10 s.
 */
export const DEFAULT_TIMEOUTS: Readonly<Timeouts> = Object.freeze({
  connectMs: 2_000,
  headersMs: 10_000,
  bodyMs: 10_000,
})

export function resolveTimeouts(overrides: Partial<Timeouts> = {}): Timeouts {
  const timeouts: Timeouts = { ...DEFAULT_TIMEOUTS, ...overrides }
  for (const [name, value] of Object.entries(timeouts)) {
    if (!Number.isInteger(value) || value < 1) {
      throw new HttpConfigError(
        `timeout ${name} must be a positive integer of milliseconds, got ${String(value)}`,
        { setting: `timeouts.${name}` },
      )
    }
  }
  return timeouts
}
