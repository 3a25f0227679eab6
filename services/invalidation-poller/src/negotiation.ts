/**
 * How the poller reads a refusal of the feed. The description gives no error
 * body ("The shape of an error body and the mapping of specific conditions to
 * codes: not shown"), so a 400 is attributed to a parameter only when the answer
 * names exactly one of those the poller may change (`level`, `pageSize`):
 * in the API error body's `parameter`, `code` or `message`, or else in the raw
 * body text. Anything else is unattributed and the poller finds out by trying.
 */

export type NegotiableParameter = 'level' | 'pageSize'

interface ErrorLike {
  status?: unknown
  code?: unknown
  apiError?: { parameter?: unknown; code?: unknown; message?: unknown }
  details?: { status?: unknown; apiError?: { parameter?: unknown; code?: unknown; message?: unknown } }
  cause?: { bodyText?: unknown }
}

export function statusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const e = err as ErrorLike
  if (typeof e.status === 'number') return e.status
  if (typeof e.details?.status === 'number') return e.details.status
  return undefined
}

function named(text: string): NegotiableParameter | undefined {
  const level = /\blevels?\b/i.test(text)
  const pageSize = /page[\s_-]?size/i.test(text)
  if (level === pageSize) return undefined
  return level ? 'level' : 'pageSize'
}

/** The parameter a 400 blames, when it names exactly one the poller can change. */
export function blamedParameter(err: unknown): NegotiableParameter | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const e = err as ErrorLike
  const api = e.apiError ?? e.details?.apiError
  if (typeof api?.parameter === 'string') return named(api.parameter)
  const apiText = [api?.code, api?.message].filter((t): t is string => typeof t === 'string').join(' ')
  if (apiText !== '') return named(apiText)
  // Not the API's error JSON: the raw body (never the request URL, which names both).
  const body = e.cause?.bodyText
  return typeof body === 'string' ? named(body.slice(0, 2000)) : undefined
}

/**
 * Whether item/range is unavailable or unreadable rather than failing for a
 * while: not served (404, 405, 501), its parameters refused (400), or an answer
 * this client cannot read. Those do not heal by retrying the same call.
 */
export function itemRangeUnavailable(err: unknown): { kind: string; detail: string } | undefined {
  const status = statusOf(err)
  if (status === 404 || status === 405 || status === 501) return { kind: 'operation-missing', detail: `HTTP ${status}` }
  if (status === 400) return { kind: 'param-refused', detail: 'HTTP 400' }
  const code = typeof err === 'object' && err !== null ? (err as ErrorLike).code : undefined
  if (code === 'ENRICHMENT_INVALID_RESPONSE' || code === 'INVALIDATION_FEED_MALFORMED')
    return { kind: 'unreadable', detail: String(code) }
  return undefined
}
