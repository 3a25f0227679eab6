import {
  HttpAbortedError,
  HttpNetworkError,
  HttpRequestError,
  HttpResponseFormatError,
  HttpStatusError,
  HttpTimeoutError,
  ThrottledError,
} from '@tep/http'
import {
  EnrichmentAbortedError,
  EnrichmentApiError,
  EnrichmentBadRequestError,
  EnrichmentForbiddenError,
  EnrichmentInvalidResponseError,
  EnrichmentMethodNotAllowedError,
  EnrichmentNetworkError,
  EnrichmentNotFoundError,
  EnrichmentNotImplementedError,
  EnrichmentRequestTooLargeError,
  EnrichmentServerError,
  EnrichmentThrottledError,
  EnrichmentTimeoutError,
  EnrichmentUnauthorizedError,
  EnrichmentUnexpectedStatusError,
  EnrichmentUnsupportedMediaTypeError,
  type ApiErrorBody,
  type EnrichmentErrorOptions,
} from './errors.ts'

/** Reads the API error body `{"error": {"code", "message", "parameter"}}`; tolerant of anything else. */
export function parseApiErrorBody(body: unknown): ApiErrorBody | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const inner = (body as { error?: unknown }).error
  if (typeof inner !== 'object' || inner === null) return undefined
  const e = inner as Record<string, unknown>
  const out: ApiErrorBody = {}
  if (typeof e.code === 'string') out.code = e.code
  if (typeof e.message === 'string') out.message = e.message.slice(0, 500)
  if (typeof e.parameter === 'string') out.parameter = e.parameter
  return Object.keys(out).length === 0 ? undefined : out
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name]
  return Array.isArray(v) ? v[0] : v
}

function describeApiError(api: ApiErrorBody | undefined, snippet: string): string {
  if (api === undefined) return snippet === '' ? '' : `: ${snippet}`
  const parameter = api.parameter === undefined ? '' : ` (parameter ${api.parameter})`
  return `: ${api.code ?? 'error'}${api.message === undefined ? '' : ` ${api.message}`}${parameter}`
}

/**
 * Below these sizes a 413 (body) or 414 (URL) cannot be the record's fault: one
 * record's request is a few hundred bytes (the raw event rules bound every field,
 * schemas/src/raw-transaction-rules.ts), RFC 9110 asks servers to take URIs of at
 * least 8000 octets, and API gateways take bodies of megabytes. A batch of a
 * hundred records is above the body size, so a batch 413 still falls back to
 * single calls, and a single call refused below it pauses the pipeline.
 */
export const MINIMAL_REQUEST = { bodyBytes: 16 * 1024, targetBytes: 2048 } as const

/**
 * Whether a 413/414/431 is about the request's own content: the part the status
 * names is larger than a minimal request. For 431 that is the URL too: no record's
 * data goes into a header, but servers count the request line in their header limit
 * (Node answers a 20 kB query string with 431). Unknown sizes count as the content's
 * fault (the old rule).
 */
export function ownContentTooLarge(status: number, sent: { targetBytes: number; bodyBytes: number } | undefined): boolean {
  if (sent === undefined) return true
  return status === 413 ? sent.bodyBytes > MINIMAL_REQUEST.bodyBytes : sent.targetBytes > MINIMAL_REQUEST.targetBytes
}

function describeSent(sent: { targetBytes: number; bodyBytes: number } | undefined): string {
  return sent === undefined ? 'size unknown' : `URL ${sent.targetBytes} bytes, body ${sent.bodyBytes} bytes`
}

/**
 * Maps an error of the HTTP core to the enrichment error for its status or
 * failure. `operation` is the client operation (e.g. `enrichment.getShop`).
 * Anything that is not an HttpRequestError is returned unchanged.
 */
export function toEnrichmentError(err: unknown, operation: string): unknown {
  if (err instanceof EnrichmentApiError || !(err instanceof HttpRequestError)) return err
  const where = `${err.method} ${err.url}`
  const base = { operation, method: err.method, url: err.url, cause: err, details: { attempt: err.attempt } }

  if (err instanceof HttpStatusError) {
    const status = err.status
    const apiError = parseApiErrorBody(err.bodyJson())
    const requestId = header(err.headers, 'x-request-id')
    const options: Omit<EnrichmentErrorOptions, 'retriable'> = {
      ...base,
      status,
      ...(apiError ? { apiError } : {}),
      ...(requestId ? { requestId } : {}),
    }
    const what = `${operation}: ${where} answered ${status}${describeApiError(apiError, err.bodySnippet)}`
    if (err instanceof ThrottledError) {
      return new EnrichmentThrottledError(
        `${what}; throttled by the API${err.retryAfterMs === undefined ? '' : `, retry after ${err.retryAfterMs} ms`} (a retry can help at a lower rate)`,
        { ...options, retryAfterMs: err.retryAfterMs },
      )
    }
    switch (status) {
      case 400:
        return new EnrichmentBadRequestError(
          `${what}; the API rejected this input (a retry will not help)`,
          options,
        )
      case 401:
        return new EnrichmentUnauthorizedError(
          `${what}; check the enrichment credentials (a retry will not help)`,
          options,
        )
      case 403:
        return new EnrichmentForbiddenError(
          `${what}; the credential lacks the right for this operation (a retry will not help)`,
          options,
        )
      case 404:
        return new EnrichmentNotFoundError(`${what} (a retry will not help)`, options)
      case 405:
        return new EnrichmentMethodNotAllowedError(
          `${what}; client and API disagree on the method (a retry will not help)`,
          options,
        )
      case 413:
      case 414:
      case 431:
        if (ownContentTooLarge(status, err.sent)) {
          return new EnrichmentRequestTooLargeError(
            `${what}; the request is too large for the API (${status === 413 ? 'body' : status === 414 ? 'URL' : 'headers with the request line'}) because of its input (a retry will not help)`,
            options,
          )
        }
        // A limit no sane API has for a request this small (a proxy's limit, an oversized
        // bearer token in the headers, which no record fills): every record would be
        // refused alike, so this must pause the pipeline, not dead-letter the stream.
        return new EnrichmentRequestTooLargeError(
          `${what}; a ${status === 413 ? 'body' : status === 414 ? 'URL' : 'header'} limit refuses even this small request ` +
            `(${describeSent(err.sent)}): a proxy or the API is misconfigured, or the credential is too large; not the record's fault: the pipeline pauses until it is fixed (a retry will not help)`,
          { ...options, recordScoped: false },
        )
      case 415:
        return new EnrichmentUnsupportedMediaTypeError(
          `${what}; client and API disagree on the body type (a retry will not help)`,
          options,
        )
      case 501:
        return new EnrichmentNotImplementedError(
          `${what}; the API does not offer this operation (a retry will not help)`,
          options,
        )
    }
    if (status >= 500)
      return new EnrichmentServerError(`${what}; the enrichment service failed (a retry can help)`, options)
    return new EnrichmentUnexpectedStatusError(
      `${what}; a status the API contract does not list (a retry will not help)`,
      options,
    )
  }
  if (err instanceof HttpTimeoutError) {
    return new EnrichmentTimeoutError(
      `${operation}: ${where} timed out waiting for the ${err.phase} after ${err.timeoutMs} ms (a retry can help)`,
      base,
    )
  }
  if (err instanceof HttpNetworkError) {
    return new EnrichmentNetworkError(
      `${operation}: ${where} failed on the network (${err.networkCode})` +
        (err.retriable
          ? ' (a retry can help once the service is reachable)'
          : '; TLS or configuration problem (a retry will not help)'),
      {
        ...base,
        retriable: err.retriable,
        details: { ...base.details, networkCode: err.networkCode, beforeSend: err.beforeSend },
      },
    )
  }
  if (err instanceof HttpAbortedError)
    return new EnrichmentAbortedError(`${operation}: ${where} was aborted by the caller`, base)
  if (err instanceof HttpResponseFormatError) {
    return new EnrichmentInvalidResponseError(
      `${operation}: ${where} returned ${err.status} with a body that breaks the contract: ${err.message}`,
      {
        ...base,
        status: err.status,
      },
    )
  }
  return err
}
