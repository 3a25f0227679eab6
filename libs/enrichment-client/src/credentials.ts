import { HttpStatusError, type HttpClient } from '@tep/http'
import { toEnrichmentError } from './error-mapping.ts'
import { EnrichmentAuthError, EnrichmentInvalidResponseError } from './errors.ts'
import type { AccessToken } from './token-cache.ts'

/**
 * How the client authenticates. OAuth 2.0 client credentials is the spec's
 * recommended method for backend traffic; Basic is the alternative.
 */
export type EnrichmentCredentials =
  | { type: 'oauth'; clientId: string; clientSecret: string }
  | { type: 'basic'; username: string; password: string }

export const TOKEN_OPERATION = 'enrichment.token'

/** Lifetime assumed when the token endpoint omits `expires_in` (the spec fixes it at 300 s). */
export const DEFAULT_TOKEN_LIFETIME_MS = 300_000

export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`
}

/**
 * Requests a token with the client-credentials grant (form body with
 * `grant_type`, `client_id`, `client_secret`). Retrying is safe (a second token
 * does no harm), so the request is marked idempotent for the retry policy.
 */
export async function requestAccessToken(
  http: HttpClient,
  tokenUrl: string,
  clientId: string,
  clientSecret: string,
  signal?: AbortSignal,
): Promise<AccessToken> {
  let text: string
  let status: number
  const url = http.resolveUrl(tokenUrl)
  try {
    const res = await http.request({
      operation: TOKEN_OPERATION,
      method: 'POST',
      path: tokenUrl,
      form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
      idempotent: true,
      ...(signal === undefined ? {} : { signal }),
    })
    text = res.text
    status = res.status
  } catch (err) {
    if (err instanceof HttpStatusError && (err.status === 400 || err.status === 401)) {
      const body = err.bodyJson() as { error?: unknown; error_description?: unknown } | undefined
      const oauthError = typeof body?.error === 'string' ? body.error : undefined
      const description =
        typeof body?.error_description === 'string' ? `: ${body.error_description.slice(0, 200)}` : ''
      throw new EnrichmentAuthError(
        `${TOKEN_OPERATION}: the token endpoint ${err.url} refused client ${JSON.stringify(clientId)} with ${err.status}` +
          `${oauthError === undefined ? '' : ` ${oauthError}`}${description}; check ENRICHMENT_CLIENT_ID / ENRICHMENT_CLIENT_SECRET ` +
          'and ENRICHMENT_TOKEN_URL (a retry will not help)',
        {
          operation: TOKEN_OPERATION,
          method: 'POST',
          url: err.url,
          status: err.status,
          oauthError,
          cause: err,
        },
      )
    }
    throw toEnrichmentError(err, TOKEN_OPERATION)
  }
  const where = `${TOKEN_OPERATION}: POST ${url.origin}${url.pathname}`
  const invalid = (problem: string): never => {
    throw new EnrichmentInvalidResponseError(`${where} returned ${status} with ${problem}`, {
      operation: TOKEN_OPERATION,
      method: 'POST',
      url: `${url.origin}${url.pathname}`,
      status,
    })
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return invalid('a body that is not JSON')
  }
  const b = body as { access_token?: unknown; token_type?: unknown; expires_in?: unknown }
  if (typeof b !== 'object' || b === null || typeof b.access_token !== 'string' || b.access_token === '')
    return invalid('no access_token')
  if (
    b.token_type !== undefined &&
    (typeof b.token_type !== 'string' || b.token_type.toLowerCase() !== 'bearer')
  ) {
    return invalid(`token_type ${JSON.stringify(b.token_type)} (expected Bearer)`)
  }
  let lifetimeMs = DEFAULT_TOKEN_LIFETIME_MS
  if (b.expires_in !== undefined) {
    const seconds = typeof b.expires_in === 'string' ? Number(b.expires_in) : b.expires_in
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0)
      return invalid(`expires_in ${JSON.stringify(b.expires_in)}`)
    lifetimeMs = seconds * 1000
  }
  return { value: b.access_token, lifetimeMs }
}
