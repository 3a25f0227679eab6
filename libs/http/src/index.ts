export { HttpClient, createHttpClient } from './http-client.ts'
export { SYSTEM_CLOCK } from './client-options.ts'
export type {
  AttemptInfo,
  HttpClientOptions,
  HttpClock,
  HttpHooks,
  HttpLogger,
  ResponseInfo,
  RetryInfo,
} from './client-options.ts'
export type { HttpMethod, HttpRequest, HttpResponse } from './request-response.ts'
export {
  HttpAbortedError,
  HttpConfigError,
  HttpNetworkError,
  HttpRequestError,
  HttpResponseFormatError,
  HttpStatusError,
  HttpTimeoutError,
  HttpTlsError,
  LimiterStoppedError,
  ThrottledError,
} from './errors.ts'
export type { HttpStatusErrorOptions, RequestContext, TimeoutPhase } from './errors.ts'
export {
  DEFAULT_RETRY_POLICY,
  backoffDelayMs,
  parseRetryAfterMs,
  resolveRetryPolicy,
} from './retry-policy.ts'
export type { RetryPolicy } from './retry-policy.ts'
export { DEFAULT_RATE_LIMITS, createRequestLimiter, resolveRateLimits } from './rate-limits.ts'
export type { RateLimits, RequestLimiter } from './rate-limits.ts'
export { DEFAULT_TIMEOUTS, resolveTimeouts } from './timeouts.ts'
export type { Timeouts } from './timeouts.ts'
export { MIN_TLS_VERSION, assertSecureUrl, isLoopbackHost } from './transport-policy.ts'
export { buildQueryString, encodePathSegment, encodeQueryComponent, redactUrl } from './query-string.ts'
export type { QueryParams, QueryValue } from './query-string.ts'
export { SingleFlight } from './single-flight.ts'
