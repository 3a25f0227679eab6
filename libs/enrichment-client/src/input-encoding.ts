import { EnrichmentInputError } from './errors.ts'

/**
 * A lookup input value, following the spec's data conventions:
 * - `undefined` (or the member missing): the client does not have the field, so
 *   the parameter is OMITTED from the request;
 * - `null` or `""`: the client has the field and it is empty, which is
 *   information in itself, so the parameter is SENT EMPTY (`name=` in a query,
 *   `""` in JSON).
 */
export type InputValue = string | null | undefined

/** `refresh` also takes a boolean for convenience; it is sent as `true`/`false`. */
export type RefreshValue = boolean | 'true' | 'false' | '' | null | undefined

function wireValue(field: string, value: unknown): string {
  if (value === null) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))
    return String(value)
  // Typed callers cannot get here; untyped ones get a clear message instead of "[object Object]" on the wire.
  throw new EnrichmentInputError(
    `lookup input ${field} must be a string, null or undefined, got ${typeof value}`,
    { operation: 'enrichment.encodeInput' },
  )
}

/**
 * Query parameters for `fields` of `input`, in the order of `fields`. Only the
 * listed fields are read, so that nothing else a caller's object carries (a full
 * card number, an internal id) can reach the API.
 */
export function toQueryParams<T extends object>(
  input: T,
  fields: ReadonlyArray<keyof T & string>,
): Record<string, string> {
  const out: Record<string, string> = {}
  for (const field of fields) {
    const value: unknown = input[field]
    if (value === undefined) continue
    out[field] = wireValue(field, value)
  }
  return out
}

/** A JSON object for `fields` of `input`: absent members left out, empty ones as `""`. */
export function toJsonObject<T extends object>(
  input: T,
  fields: ReadonlyArray<keyof T & string>,
): Record<string, string> {
  return toQueryParams(input, fields)
}
