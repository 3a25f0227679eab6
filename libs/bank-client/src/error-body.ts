import type { CobsErrorItem } from './errors.ts'

/**
 * Reads the COBS error body `{errors:[{error, scope, parameters, message}]}` leniently: a
 * single object instead of an array, null fields and non-string parameter values are all
 * accepted. Returns an empty list for anything else (HTML from a gateway, empty body).
 */
export function parseCobsErrors(text: string): CobsErrorItem[] {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return []
  }
  if (body === null || typeof body !== 'object') return []
  const raw = (body as { errors?: unknown }).errors
  const list = Array.isArray(raw) ? raw : raw !== null && typeof raw === 'object' ? [raw] : []
  const items: CobsErrorItem[] = []
  for (const entry of list) {
    if (entry === null || typeof entry !== 'object') continue
    const e = entry as Record<string, unknown>
    if (typeof e.error !== 'string') continue
    const params =
      e.parameters !== null && typeof e.parameters === 'object' && !Array.isArray(e.parameters)
        ? (e.parameters as Record<string, unknown>)
        : undefined
    items.push({
      error: e.error,
      scope: typeof e.scope === 'string' ? e.scope : undefined,
      parameters: params,
      message: typeof e.message === 'string' ? e.message : undefined,
    })
  }
  return items
}

export interface OAuthErrorBody {
  error: string
  error_description?: string | undefined
}

/** Reads an RFC 6749 error body `{error, error_description}`; undefined when the body is not one. */
export function parseOAuthError(text: string): OAuthErrorBody | undefined {
  try {
    const body = JSON.parse(text) as unknown
    if (
      body !== null &&
      typeof body === 'object' &&
      typeof (body as { error?: unknown }).error === 'string'
    ) {
      const b = body as { error: string; error_description?: unknown }
      return {
        error: b.error,
        error_description: typeof b.error_description === 'string' ? b.error_description : undefined,
      }
    }
  } catch {
    // not JSON
  }
  return undefined
}

/** `AC09 (debtorAccount.currency): message; NO_PART ...` for error messages. */
export function describeCobsErrors(errors: readonly CobsErrorItem[]): string {
  return errors
    .map((e) => {
      const reason = typeof e.parameters?.REASON === 'string' ? ` ${e.parameters.REASON}` : ''
      return `${e.error}${reason}${e.scope ? ` (${e.scope})` : ''}${e.message ? `: ${e.message}` : ''}`
    })
    .join('; ')
}
