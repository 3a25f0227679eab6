import type { IncomingHttpHeaders } from 'node:http'
import {
  HttpConfigError,
  HttpResponseFormatError,
  HttpStatusError,
  ThrottledError,
  type RequestContext,
} from './errors.ts'
import type { QueryParams } from './query-string.ts'
import type { RetryPolicy } from './retry-policy.ts'

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

export interface HttpRequest {
  /** Logical name for logs, metrics and errors, e.g. `enrichment.getShop`. */
  operation: string
  method: HttpMethod
  /** Path appended to the base URL (starts with `/`), or an absolute URL checked by the transport policy. */
  path: string
  query?: QueryParams
  headers?: Readonly<Record<string, string>>
  /** JSON body (sent as application/json, never compressed). */
  json?: unknown
  /** Form body (application/x-www-form-urlencoded). */
  form?: Readonly<Record<string, string>>
  /**
   * Safe to send twice? Defaults to true for GET, HEAD, PUT, DELETE and false for
   * POST and PATCH. Non-idempotent requests are retried only when the connection
   * could not be established (the server never saw them). Reads sent as POST
   * (batch lookups) pass true.
   */
  idempotent?: boolean
  signal?: AbortSignal
  /** Per-request override of the client's retry policy. */
  retry?: Partial<RetryPolicy>
  /**
   * Non-2xx answers this returns true for resolve as responses (neither thrown
   * nor retried). For answers that are information, not failures (a lookup's
   * 404 "no shop"): building, throwing and catching an HttpStatusError for them
   * costs more than the rest of the response's handling.
   */
  accept?: (status: number, text: string) => boolean
}

export interface HttpResponse {
  /** The request's operation, method and redacted URL, for messages about this response. */
  operation: string
  method: string
  url: string
  status: number
  headers: IncomingHttpHeaders
  /** The body as UTF-8 text. */
  text: string
  /** Attempts it took (1 = no retry). */
  attempts: number
  /** Parses the body as JSON; throws HttpResponseFormatError when it is not. */
  json<T = unknown>(): T
}

const SNIPPET_CHARS = 300

/** Status, headers and text of one answered attempt. */
export interface Exchange {
  status: number
  headers: IncomingHttpHeaders
  text: string
}

export function encodeBody(req: HttpRequest): { body: string | undefined; contentType: string | undefined } {
  if (req.json !== undefined && req.form !== undefined) {
    throw new HttpConfigError(`${req.operation}: a request has either a json or a form body, not both`)
  }
  if (req.json !== undefined) return { body: JSON.stringify(req.json), contentType: 'application/json' }
  if (req.form !== undefined)
    return {
      body: new URLSearchParams(req.form).toString(),
      contentType: 'application/x-www-form-urlencoded',
    }
  return { body: undefined, contentType: undefined }
}

export function statusError(
  exchange: Exchange,
  context: RequestContext,
  policy: RetryPolicy,
  retryAfterMs: number | undefined,
): HttpStatusError {
  const bodySnippet =
    exchange.text.length > SNIPPET_CHARS ? `${exchange.text.slice(0, SNIPPET_CHARS)}...` : exchange.text
  const base = { bodySnippet, bodyText: exchange.text, headers: exchange.headers }
  if (exchange.status === 429) return new ThrottledError(context, { ...base, retryAfterMs })
  return new HttpStatusError(context, {
    ...base,
    status: exchange.status,
    retriable: policy.retryStatuses.includes(exchange.status),
  })
}

export function buildResponse(exchange: Exchange, attempts: number, context: RequestContext): HttpResponse {
  return {
    operation: context.operation,
    method: context.method,
    url: context.url,
    status: exchange.status,
    headers: exchange.headers,
    text: exchange.text,
    attempts,
    json<T>(): T {
      try {
        return JSON.parse(exchange.text) as T
      } catch (cause) {
        const snippet = exchange.text.slice(0, SNIPPET_CHARS)
        throw new HttpResponseFormatError(
          { ...context, attempt: attempts },
          { status: exchange.status, reason: 'body is not valid JSON', cause, bodySnippet: snippet },
        )
      }
    },
  }
}
