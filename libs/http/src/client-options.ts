import { setTimeout as delay } from 'node:timers/promises'
import type { Dispatcher } from 'undici'
import { HttpConfigError, type HttpRequestError } from './errors.ts'
import type { RateLimits, RequestLimiter } from './rate-limits.ts'
import type { RetryPolicy } from './retry-policy.ts'
import type { Timeouts } from './timeouts.ts'

/** What the hooks receive about an attempt. */
export interface AttemptInfo {
  operation: string
  method: string
  /** Redacted URL (no query values). */
  url: string
  attempt: number
}

export interface ResponseInfo extends AttemptInfo {
  /** HTTP status, absent when the attempt failed without a response. */
  status?: number
  /** Error code of a failed attempt (HTTP_TIMEOUT, HTTP_NETWORK_ERROR, HTTP_STATUS...). */
  errorCode?: string
  /** Time from sending to the end of the body, excluding time queued in the limiter. */
  durationMs: number
}

export interface RetryInfo extends AttemptInfo {
  /** Wait before the next attempt. */
  delayMs: number
  /** The failure that caused the retry. */
  error: HttpRequestError
}

/**
 * Observability callbacks. They run synchronously on the request path, must be
 * cheap, and must not throw (a throwing hook is logged and ignored).
 */
export interface HttpHooks {
  onRequest?: (info: AttemptInfo) => void
  onResponse?: (info: ResponseInfo) => void
  onRetry?: (info: RetryInfo) => void
}

/** pino-compatible subset used by the library. */
export interface HttpLogger {
  warn(obj: object, msg?: string): void
  debug(obj: object, msg?: string): void
}

/** Time source and sleep, injectable so tests can run retries without waiting. */
export interface HttpClock {
  now(): number
  sleep(ms: number, signal?: AbortSignal): Promise<void>
}

export const SYSTEM_CLOCK: HttpClock = {
  now: () => Date.now(),
  sleep: (ms, signal) => delay(ms, undefined, signal === undefined ? undefined : { signal }),
}

export interface HttpClientOptions {
  /** Base URL every relative request path is appended to. https://, or http:// to loopback only. */
  baseUrl: string | URL
  /** Name of the setting baseUrl came from, used in configuration errors (e.g. `ENRICHMENT_API_URL`). */
  baseUrlName?: string
  timeouts?: Partial<Timeouts>
  retry?: Partial<RetryPolicy>
  /** A shared limiter for the credential, or limits for a limiter owned by this client. */
  limiter?: RequestLimiter | Partial<RateLimits>
  hooks?: HttpHooks
  /** Extra CA certificates to trust (e.g. a simulator's self-signed certificate). */
  tls?: { ca?: string | Buffer | ReadonlyArray<string | Buffer> }
  /** Headers sent with every request; `accept: application/json` unless overridden. */
  headers?: Readonly<Record<string, string>>
  /** Largest successful response body read, in bytes (default 32 MiB). */
  maxResponseBytes?: number
  /** Largest error response body kept for parsing, in bytes (default 64 KiB). */
  maxErrorBodyBytes?: number
  /**
   * Replace the undici Agent (tests: MockAgent, interceptors). The client then does not close it,
   * and the connect timeout, TLS minimum and `tls.ca` are the dispatcher's own.
   */
  dispatcher?: Dispatcher
  logger?: HttpLogger
  clock?: HttpClock
  /** Random source in [0, 1) for jitter. */
  random?: () => number
}

/** A size option: the fallback when unset, else a positive integer. */
export function positiveOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1)
    throw new HttpConfigError(`${name} must be a positive integer, got ${String(value)}`, { setting: name })
  return value
}

export function lowerKeys(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v
  return out
}
