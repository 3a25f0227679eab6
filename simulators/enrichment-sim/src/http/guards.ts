import type { FastifyRequest } from 'fastify'
import type { Gate } from './app.ts'
import type { Principal, Scope } from '../core/credentials.ts'
import { parseBasic } from '../core/credentials.ts'
import { unauthorized } from '../core/token-service.ts'
import { ApiError } from '../errors.ts'
import type { SimContext } from './context.ts'

const CHALLENGE = 'Bearer realm="enrichment-sim", Basic realm="enrichment-sim"'

/**
 * The checks every `/v5` request passes before its handler, in this order:
 * Accept header (400), credentials (401), scope (403), rate limit (429).
 */
export async function guardApiRequest(context: SimContext, request: FastifyRequest, scope: Scope | undefined): Promise<Principal> {
  if (request.headers.accept === undefined || request.headers.accept.trim() === '') {
    throw new ApiError(400, 'MISSING_ACCEPT_HEADER', 'the Accept header is required; send "Accept: application/json"')
  }
  const principal = await authenticate(context, request.headers.authorization)
  if (scope !== undefined && !principal.scopes.includes(scope)) {
    throw new ApiError(403, 'INSUFFICIENT_SCOPE', `the credential ${principal.key} lacks the "${scope}" right this operation needs`)
  }
  if (context.limiter !== undefined) {
    const wait = context.limiter.take(principal.key)
    if (wait > 0) throw new ApiError(429, 'RATE_LIMITED', `rate limit of the credential ${principal.key} exceeded; retry after ${wait} s`, { headers: { 'retry-after': String(wait) } })
  }
  return principal
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the API gate once the caller is authenticated. */
    principal?: Principal
  }
}

/** The gate of an API operation: `scope` undefined means any authenticated caller. */
export function apiGate(context: SimContext, scope: Scope | undefined): Gate {
  return async (request) => {
    request.principal = await guardApiRequest(context, request, scope)
  }
}

async function authenticate(context: SimContext, header: string | undefined): Promise<Principal> {
  if (header === undefined || header.trim() === '') {
    throw new ApiError(401, 'MISSING_CREDENTIALS', 'no Authorization header; send "Authorization: Bearer <token>" or HTTP Basic credentials', { headers: { 'www-authenticate': CHALLENGE } })
  }
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (bearer !== null) return context.tokens.verify(bearer[1] as string)
  if (/^Basic\s/i.test(header)) {
    const basic = parseBasic(header)
    const user = basic === undefined ? undefined : context.credentials.basic(basic.user, basic.password)
    if (user === undefined) throw new ApiError(401, 'INVALID_CREDENTIALS', 'the Basic credentials are not valid', { headers: { 'www-authenticate': 'Basic realm="enrichment-sim"' } })
    return { key: `basic:${user.user}`, scopes: user.scopes }
  }
  throw unauthorized('INVALID_CREDENTIALS', 'the Authorization header must use the Bearer or Basic scheme')
}

/** POST bodies of the API must be JSON; anything else (or nothing) is a 415. */
export function requireJson(request: FastifyRequest): void {
  const type = request.headers['content-type']
  if (type === undefined || !/^application\/json\s*(;|$)/i.test(type)) {
    throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', `the body must be application/json, got ${type === undefined ? 'no Content-Type' : JSON.stringify(type)}`)
  }
}
