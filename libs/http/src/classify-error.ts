import {
  HttpNetworkError,
  HttpTimeoutError,
  HttpTlsError,
  type HttpRequestError,
  type RequestContext,
} from './errors.ts'
import type { Timeouts } from './timeouts.ts'

/** Failures that happen before any byte of the request reached the server. */
const BEFORE_SEND_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
])

const TLS_CODE = /^(ERR_SSL_|ERR_TLS_)|CERT|SIGNATURE|^UNABLE_TO_/

/** Socket and protocol-level failures that a new connection may not have. */
const NETWORK_CODE =
  /^(E[A-Z]+|UND_ERR_SOCKET|UND_ERR_CLOSED|UND_ERR_INFO|UND_ERR_RES_CONTENT_LENGTH_MISMATCH|HPE_[A-Z_]+)$/

function errorCodeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown }
  if (typeof e.code === 'string') return e.code
  // Happy-eyeballs connects reject with an AggregateError of per-address failures.
  if (Array.isArray(e.errors) && e.errors.length > 0) return errorCodeOf(e.errors[0])
  if (e.cause !== undefined) return errorCodeOf(e.cause)
  return undefined
}

/**
 * Maps an undici / Node network error to the typed errors of this package.
 * Returns undefined for anything that is not a transport failure (a programming
 * error such as an invalid header), which the caller rethrows unchanged.
 */
export function classifyTransportError(
  err: unknown,
  context: RequestContext,
  timeouts: Timeouts,
): HttpRequestError | undefined {
  const code = errorCodeOf(err)
  if (code === undefined) return undefined
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new HttpTimeoutError(context, { cause: err, phase: 'connect', timeoutMs: timeouts.connectMs })
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new HttpTimeoutError(context, { cause: err, phase: 'headers', timeoutMs: timeouts.headersMs })
    case 'UND_ERR_BODY_TIMEOUT':
      return new HttpTimeoutError(context, { cause: err, phase: 'body', timeoutMs: timeouts.bodyMs })
  }
  if (TLS_CODE.test(code)) return new HttpTlsError(context, { cause: err, networkCode: code })
  if (NETWORK_CODE.test(code))
    return new HttpNetworkError(context, {
      cause: err,
      networkCode: code,
      beforeSend: BEFORE_SEND_CODES.has(code),
    })
  return undefined
}
