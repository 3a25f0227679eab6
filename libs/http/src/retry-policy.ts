import { HttpConfigError } from './errors.ts'

/**
 * When and how long to retry, as data. Merged over DEFAULT_RETRY_POLICY with
 * `resolveRetryPolicy` and validated there.
 */
export interface RetryPolicy {
  /** Retries after the first attempt (0 = never retry). */
  retries: number
  /** Backoff ceiling of the first retry, in ms. */
  initialDelayMs: number
  /** Backoff ceiling never exceeds this, in ms. */
  maxDelayMs: number
  /** Growth of the ceiling per retry. */
  factor: number
  /**
   * Full jitter (AWS style): wait a uniform random time in [0, ceiling]. Spreads
   * the retries of many clients hit by the same outage. When false, wait the ceiling.
   */
  jitter: boolean
  /** Statuses worth retrying for idempotent requests. */
  retryStatuses: readonly number[]
  /** Retry connection failures and broken connections (idempotent requests). */
  retryNetworkErrors: boolean
  /** Retry connect/headers/body timeouts (idempotent requests). */
  retryTimeouts: boolean
  /** Honour the Retry-After header of 429 and 503 answers. */
  honorRetryAfter: boolean
  /**
   * Longest Retry-After the client waits for in-line. A server asking for more
   * gets no in-line retry: the error is thrown (still retriable) so that the
   * caller can pause its consumer instead of holding a request open.
   */
  maxRetryAfterMs: number
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  retries: 4,
  initialDelayMs: 100,
  maxDelayMs: 5_000,
  factor: 2,
  jitter: true,
  retryStatuses: Object.freeze([429, 500, 502, 503, 504]),
  retryNetworkErrors: true,
  retryTimeouts: true,
  honorRetryAfter: true,
  maxRetryAfterMs: 30_000,
})

function nonNegative(name: string, value: number, integer = false): void {
  if (!Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    throw new HttpConfigError(
      `retry policy ${name} must be a non-negative ${integer ? 'integer' : 'number'}, got ${String(value)}`,
      {
        setting: `retry.${name}`,
      },
    )
  }
}

/** Merges `overrides` over the defaults and checks every field. */
export function resolveRetryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    ...overrides,
    retryStatuses: [...(overrides.retryStatuses ?? DEFAULT_RETRY_POLICY.retryStatuses)],
  }
  nonNegative('retries', policy.retries, true)
  nonNegative('initialDelayMs', policy.initialDelayMs)
  nonNegative('maxDelayMs', policy.maxDelayMs)
  nonNegative('maxRetryAfterMs', policy.maxRetryAfterMs)
  if (!Number.isFinite(policy.factor) || policy.factor < 1) {
    throw new HttpConfigError(`retry policy factor must be a number >= 1, got ${String(policy.factor)}`, {
      setting: 'retry.factor',
    })
  }
  if (policy.maxDelayMs < policy.initialDelayMs) {
    throw new HttpConfigError(
      `retry policy maxDelayMs (${policy.maxDelayMs}) must not be below initialDelayMs (${policy.initialDelayMs})`,
      {
        setting: 'retry.maxDelayMs',
      },
    )
  }
  for (const status of policy.retryStatuses) {
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new HttpConfigError(
        `retry policy retryStatuses must hold 4xx/5xx status codes, got ${String(status)}`,
        { setting: 'retry.retryStatuses' },
      )
    }
  }
  return policy
}

/**
 * The wait before retry number `retry` (1-based): exponential ceiling
 * `min(maxDelayMs, initialDelayMs * factor^(retry-1))`, then full jitter.
 * `random` returns [0, 1) and is injectable for tests.
 */
export function backoffDelayMs(
  policy: RetryPolicy,
  retry: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** Math.max(0, retry - 1))
  return policy.jitter ? Math.floor(random() * (ceiling + 1)) : ceiling
}

/**
 * Parses a Retry-After header value (RFC 9110: delay-seconds or an HTTP-date) into
 * milliseconds from `nowMs`. Returns undefined when absent or unparsable; a date in
 * the past gives 0.
 */
export function parseRetryAfterMs(value: string | string[] | undefined, nowMs: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value
  if (raw === undefined) return undefined
  const text = raw.trim()
  if (text === '') return undefined
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // Only the HTTP-date form may follow; Date.parse accepts IMF-fixdate, RFC 850 and asctime.
  if (!/[a-z]/i.test(text)) return undefined
  const at = Date.parse(text)
  if (Number.isNaN(at)) return undefined
  return Math.max(0, at - nowMs)
}
