import {
  HttpAbortedError,
  HttpNetworkError,
  HttpStatusError,
  HttpTimeoutError,
  HttpTlsError,
  ThrottledError,
  type RequestContext,
} from '@tep/http'
import { describe, expect, it } from 'vitest'
import { toEnrichmentError } from './error-mapping.ts'
import {
  EnrichmentAbortedError,
  EnrichmentApiError,
  EnrichmentBadRequestError,
  EnrichmentForbiddenError,
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
} from './errors.ts'

const context: RequestContext = {
  operation: 'enrichment.findByCardTransaction',
  method: 'GET',
  url: 'https://api.example.com/v5/shops/findByCardTransaction?merchantId=*&mcc=*',
  attempt: 1,
}

function statusError(status: number, body: unknown, headers: Record<string, string> = {}): HttpStatusError {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  return new HttpStatusError(context, {
    status,
    retriable: [500, 502, 503, 504].includes(status),
    bodySnippet: text.slice(0, 300),
    bodyText: text,
    headers,
  })
}

describe('413, 414 and 431: the record\'s fault only when its request is large', () => {
  const sized = (status: number, sent: { targetBytes: number; bodyBytes: number }) =>
    toEnrichmentError(
      new HttpStatusError({ ...context, sent }, { status, retriable: false, bodySnippet: '', bodyText: '', headers: {} }),
      context.operation,
    ) as EnrichmentRequestTooLargeError

  it('a minimal request refused (a proxy\'s limit) is not record-scoped: the pipeline pauses', () => {
    for (const status of [413, 414, 431]) {
      const err = sized(status, { targetBytes: 120, bodyBytes: 400 })
      expect(err).toBeInstanceOf(EnrichmentRequestTooLargeError)
      expect(err.recordScoped).toBe(false)
      expect(err.message).toMatch(/refuses even this small request \(URL 120 bytes, body 400 bytes\).*not the record's fault/)
    }
  })

  it('a large body (413) or URL (414) is the request\'s own content: record-scoped', () => {
    expect(sized(413, { targetBytes: 120, bodyBytes: 40_000 }).recordScoped).toBe(true)
    expect(sized(414, { targetBytes: 9_000, bodyBytes: 0 }).recordScoped).toBe(true)
    // Servers count the request line in the header limit (Node: 431 for a 20 kB query).
    expect(sized(431, { targetBytes: 20_000, bodyBytes: 0 }).recordScoped).toBe(true)
    // The other part being large does not count: a 413 is about the body, a 414/431 about the URL.
    expect(sized(413, { targetBytes: 9_000, bodyBytes: 300 }).recordScoped).toBe(false)
    expect(sized(431, { targetBytes: 300, bodyBytes: 40_000 }).recordScoped).toBe(false)
  })
})

describe('toEnrichmentError', () => {
  it.each([
    [400, EnrichmentBadRequestError, 'ENRICHMENT_BAD_REQUEST', false, true],
    [401, EnrichmentUnauthorizedError, 'ENRICHMENT_UNAUTHORIZED', false, false],
    [403, EnrichmentForbiddenError, 'ENRICHMENT_FORBIDDEN', false, false],
    [404, EnrichmentNotFoundError, 'ENRICHMENT_NOT_FOUND', false, false],
    [405, EnrichmentMethodNotAllowedError, 'ENRICHMENT_METHOD_NOT_ALLOWED', false, false],
    [415, EnrichmentUnsupportedMediaTypeError, 'ENRICHMENT_UNSUPPORTED_MEDIA_TYPE', false, false],
    [501, EnrichmentNotImplementedError, 'ENRICHMENT_NOT_IMPLEMENTED', false, false],
    [500, EnrichmentServerError, 'ENRICHMENT_SERVER_ERROR', true, false],
    [502, EnrichmentServerError, 'ENRICHMENT_SERVER_ERROR', true, false],
    [503, EnrichmentServerError, 'ENRICHMENT_SERVER_ERROR', true, false],
    [504, EnrichmentServerError, 'ENRICHMENT_SERVER_ERROR', true, false],
    [599, EnrichmentServerError, 'ENRICHMENT_SERVER_ERROR', true, false],
    [409, EnrichmentUnexpectedStatusError, 'ENRICHMENT_UNEXPECTED_STATUS', false, false],
    [413, EnrichmentRequestTooLargeError, 'ENRICHMENT_REQUEST_TOO_LARGE', false, true],
    [414, EnrichmentRequestTooLargeError, 'ENRICHMENT_REQUEST_TOO_LARGE', false, true],
    [431, EnrichmentRequestTooLargeError, 'ENRICHMENT_REQUEST_TOO_LARGE', false, true],
  ] as const)('maps %i to %o', (status, type, code, retriable, recordScoped) => {
    const mapped = toEnrichmentError(
      statusError(status, { error: { code: 'SOME_CODE', message: 'why' } }),
      context.operation,
    )
    expect(mapped).toBeInstanceOf(type)
    expect(mapped).toBeInstanceOf(EnrichmentApiError)
    expect(mapped).toMatchObject({
      code,
      retriable,
      recordScoped,
      status,
      operation: 'enrichment.findByCardTransaction',
    })
    const message = (mapped as Error).message
    expect(message).toContain(
      `enrichment.findByCardTransaction: GET https://api.example.com/v5/shops/findByCardTransaction?merchantId=*&mcc=* answered ${status}`,
    )
    expect(message).toContain(retriable ? '(a retry can help' : '(a retry will not help)')
  })

  it('keeps the API error code, parameter and request id of a 400', () => {
    const mapped = toEnrichmentError(
      statusError(
        400,
        { error: { code: 'INVALID_PARAMETER', message: 'mcc must be 4 digits', parameter: 'mcc' } },
        { 'x-request-id': 'req-42' },
      ),
      context.operation,
    ) as EnrichmentBadRequestError
    expect(mapped.apiError).toEqual({
      code: 'INVALID_PARAMETER',
      message: 'mcc must be 4 digits',
      parameter: 'mcc',
    })
    expect(mapped.requestId).toBe('req-42')
    expect(mapped.message).toMatch(
      /answered 400: INVALID_PARAMETER mcc must be 4 digits \(parameter mcc\); the API rejected this input/,
    )
    expect(mapped.toJSON()).toMatchObject({
      code: 'ENRICHMENT_BAD_REQUEST',
      status: 400,
      requestId: 'req-42',
      recordScoped: true,
    })
    expect(mapped.cause).toBeInstanceOf(HttpStatusError)
  })

  it('tolerates a non-JSON error body', () => {
    const mapped = toEnrichmentError(
      statusError(502, '<html>Bad Gateway</html>'),
      context.operation,
    ) as EnrichmentServerError
    expect(mapped.apiError).toBeUndefined()
    expect(mapped.message).toContain('answered 502: <html>Bad Gateway</html>')
  })

  it('maps 429 to a retriable EnrichmentThrottledError with retryAfterMs', () => {
    const throttled = new ThrottledError(context, {
      bodySnippet: '',
      bodyText: '{"error":{"code":"RATE_LIMITED","message":"slow"}}',
      headers: {},
      retryAfterMs: 2000,
    })
    const mapped = toEnrichmentError(throttled, context.operation) as EnrichmentThrottledError
    expect(mapped).toBeInstanceOf(EnrichmentThrottledError)
    expect(mapped).toMatchObject({
      code: 'ENRICHMENT_THROTTLED',
      retriable: true,
      retryAfterMs: 2000,
      status: 429,
    })
    expect(mapped.message).toMatch(/retry after 2000 ms/)
  })

  it('maps transport failures and says whether a retry helps', () => {
    const timeout = toEnrichmentError(
      new HttpTimeoutError(context, { cause: new Error('t'), phase: 'headers', timeoutMs: 5000 }),
      'op',
    )
    expect(timeout).toBeInstanceOf(EnrichmentTimeoutError)
    expect(timeout).toMatchObject({ code: 'ENRICHMENT_TIMEOUT', retriable: true })

    const reset = toEnrichmentError(
      new HttpNetworkError(context, { cause: new Error('r'), networkCode: 'ECONNRESET', beforeSend: false }),
      'op',
    )
    expect(reset).toBeInstanceOf(EnrichmentNetworkError)
    expect(reset).toMatchObject({ code: 'ENRICHMENT_NETWORK_ERROR', retriable: true })
    expect((reset as Error).message).toMatch(/\(ECONNRESET\) \(a retry can help/)

    const tls = toEnrichmentError(
      new HttpTlsError(context, { cause: new Error('c'), networkCode: 'CERT_HAS_EXPIRED' }),
      'op',
    )
    expect(tls).toMatchObject({ code: 'ENRICHMENT_NETWORK_ERROR', retriable: false })

    const aborted = toEnrichmentError(new HttpAbortedError(context, new Error('stop')), 'op')
    expect(aborted).toBeInstanceOf(EnrichmentAbortedError)
  })

  it('passes foreign errors through untouched', () => {
    const foreign = new TypeError('bug')
    expect(toEnrichmentError(foreign, 'op')).toBe(foreign)
  })
})
