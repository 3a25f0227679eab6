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
  if (params === undefined) return ''
  let query = ''
  for (const name of Object.keys(params)) {
    const value = params[name]
    if (value === undefined) continue
    const pair = `${encodedName(name)}=${value === null ? '' : encodeQueryComponent(String(value))}`
    query = query === '' ? pair : `${query}&${pair}`
  }
  return query
}

/**
 * Parameter names come from code (a handful per API), so their encoding is
 * remembered; the bound keeps a caller that builds names from data from growing
 * the table without limit.
 */
const NAME_CACHE_LIMIT = 1_000
const encodedNames = new Map<string, string>()

function encodedName(name: string): string {
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
  const encoded = encodeURIComponent(value)
  // Most values hold none of these; testing first skips the replace callback machinery.
  if (!SUB_DELIMS.test(encoded)) return encoded
  return encoded.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

const SUB_DELIMS = /[!'()*]/

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

/**
 * The redacted query part (`?name=*&...`, or "" when no parameter is present) of
 * the URL whose query `buildQueryString(params)` makes: the same text redactUrl
 * gives for that URL, without parsing one.
 */
export function redactedQuery(params: QueryParams | undefined): string {
  if (params === undefined) return ''
  let query = ''
  for (const name of Object.keys(params)) {
    if (params[name] === undefined) continue
    query += `${query === '' ? '?' : '&'}${encodedName(name)}=*`
  }
  return query
}
