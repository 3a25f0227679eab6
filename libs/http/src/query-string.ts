/** A query parameter value: undefined = absent (omitted), null or "" = present but empty (sent as `name=`). */
export type QueryValue = string | number | boolean | null | undefined

export type QueryParams = Readonly<Record<string, QueryValue>>

/**
 * Builds a percent-encoded query string (without the leading `?`), keeping the
 * difference between "absent" and "empty" that the external APIs treat as
 * information: undefined is omitted, null and "" become `name=`.
 *
 * Spaces become `%20`, not `+`: `+` means a space only in form encoding, and a
 * server that reads the query as plain RFC 3986 would see a literal plus.
 * Order follows the object's key order, which keeps URLs stable for logs and tests.
 */
export function buildQueryString(params: QueryParams | undefined): string {
  return encodeQuery(params).query
}

/** A query string and its redacted form (`?name=*&...`), made in one pass over the parameters. */
export interface EncodedQuery {
  /** Without the leading `?`; "" when no parameter is present. */
  query: string
  /** With the leading `?` (values hidden); "" when no parameter is present. */
  redacted: string
}

const NO_QUERY: EncodedQuery = Object.freeze({ query: '', redacted: '' })

/**
 * The query string (as buildQueryString) and its redacted form (`?name=*&...`, the
 * text redactUrl gives for that URL) at once: the request path needs both for
 * every request, and each was a walk over a parameter object whose shape varies
 * from request to request (which members are absent).
 */
export function encodeQuery(params: QueryParams | undefined): EncodedQuery {
  if (params === undefined) return NO_QUERY
  let query = ''
  let redacted = ''
  for (const name of Object.keys(params)) {
    const value = params[name]
    if (value === undefined) continue
    const encodedName = encodedNameOf(name)
    const text = value === null ? '' : typeof value === 'string' ? value : String(value)
    if (query === '') {
      query = `${encodedName}=${encodeQueryComponent(text)}`
      redacted = `?${encodedName}=*`
    } else {
      query = `${query}&${encodedName}=${encodeQueryComponent(text)}`
      redacted = `${redacted}&${encodedName}=*`
    }
  }
  return query === '' ? NO_QUERY : { query, redacted }
}

/**
 * Parameter names come from code (a handful per API), so their encoding is
 * remembered; the bound keeps a caller that builds names from data from growing
 * the table without limit.
 */
const NAME_CACHE_LIMIT = 1_000
const encodedNames = new Map<string, string>()

function encodedNameOf(name: string): string {
  let encoded = encodedNames.get(name)
  if (encoded === undefined) {
    encoded = encodeQueryComponent(name)
    if (encodedNames.size >= NAME_CACHE_LIMIT) encodedNames.clear()
    encodedNames.set(name, encoded)
  }
  return encoded
}

/** encodeURIComponent plus the RFC 3986 sub-delimiters it leaves alone, so values round-trip through any parser. */
export function encodeQueryComponent(value: string): string {
  // Most values (ids, codes, amounts) are all unreserved characters: returned as
  // they are, without the new string encodeURIComponent always makes.
  if (isUnreserved(value)) return value
  const encoded = encodeURIComponent(value)
  // Most values hold none of these; testing first skips the replace callback machinery.
  if (!SUB_DELIMS.test(encoded)) return encoded
  return encoded.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

const SUB_DELIMS = /[!'()*]/

/** Only RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~): nothing to encode. */
function isUnreserved(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (!(
      (c >= 97 && c <= 122) || // a-z
      (c >= 65 && c <= 90) || // A-Z
      (c >= 48 && c <= 57) || // 0-9
      c === 45 || // -
      c === 46 || // .
      c === 95 || // _
      c === 126 // ~
    ))
      return false
  }
  return true
}

/** Encodes one path segment (an id that may hold `/`, `@`, spaces...). */
export function encodePathSegment(value: string): string {
  return encodeQueryComponent(value)
}

/**
 * The URL safe to log: origin and path, query parameter names kept and their
 * values hidden (query values carry merchant ids, card BINs, account numbers).
 */
export function redactUrl(url: URL): string {
  const names = [...new Set([...url.searchParams.keys()])]
  const query = names.length === 0 ? '' : `?${names.map((n) => `${encodeQueryComponent(n)}=*`).join('&')}`
  return `${url.origin}${url.pathname}${query}`
}

