import type { FastifyRequest } from 'fastify'
import { parseHttpDate } from '../core/bank-dates.ts'
import { BankApiError } from '../errors.ts'
import type { Authenticated, Scope } from '../oauth/token-service.ts'
import type { SimContext } from '../sim-context.ts'

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name]
  return Array.isArray(v) ? v[0] : v
}

/**
 * The checks every COBS operation makes before its own: the COBS 3.0 headers
 * (X-Request-ID required; Date and User-Involved validated when sent), the bearer
 * token, the gateway client id (X-IBM-Client-Id = the token's client) and the scope.
 */
export function guard(ctx: SimContext, req: FastifyRequest, scopes: readonly Scope[]): Authenticated {
  // The token first: a caller without a valid one learns nothing about the other rules.
  const who = authenticateBearer(ctx, req)
  const requestId = header(req, 'x-request-id')
  if (requestId === undefined || requestId === '') throw new BankApiError(400, { error: 'FIELD_MISSING', scope: 'X-Request-ID', message: 'header X-Request-ID is required (COBS 3.0)' })
  if (requestId.length > 60) throw new BankApiError(400, { error: 'FIELD_INVALID', scope: 'X-Request-ID', message: 'X-Request-ID is longer than 60 characters' })
  const clientId = header(req, 'x-ibm-client-id')
  if (clientId !== who.consent.clientId) {
    throw new BankApiError(401, {
      error: 'UNAUTHORISED',
      scope: 'X-IBM-Client-Id',
      parameters: { REASON: clientId === undefined ? 'CLIENT_ID_MISSING' : 'CLIENT_ID_MISMATCH' },
      message: clientId === undefined ? 'header X-IBM-Client-Id is required' : 'X-IBM-Client-Id is not the application the token was issued to',
    })
  }
  if (!scopes.includes(who.consent.scope)) {
    throw new BankApiError(403, { error: 'FORBIDDEN', parameters: { REQUIRED_SCOPE: scopes.join(' '), TOKEN_SCOPE: who.consent.scope }, message: `this operation needs a ${scopes.join(' or ')} token, got ${who.consent.scope}` })
  }
  const date = header(req, 'date')
  if (date !== undefined && parseHttpDate(date) === undefined) throw new BankApiError(400, { error: 'FIELD_INVALID', scope: 'Date', message: `header Date must be an HTTP-date, got ${JSON.stringify(date)}` })
  const involved = header(req, 'user-involved')
  if (involved !== undefined && involved !== 'true' && involved !== 'false') {
    throw new BankApiError(400, { error: 'FIELD_INVALID', scope: 'User-Involved', message: `header User-Involved must be true or false, got ${JSON.stringify(involved)}` })
  }
  // Whatever is due settles before anyone looks at balances, histories or statuses.
  ctx.payments.settleDue()
  return who
}

export function headerOf(req: FastifyRequest, name: string): string | undefined {
  return header(req, name)
}

/** The bearer token of the request, or the 401 the bank answers (missing, unknown, expired, revoked). */
export function authenticateBearer(ctx: SimContext, req: FastifyRequest): Authenticated {
  const auth = header(req, 'authorization')
  const bearer = auth !== undefined && /^Bearer /i.test(auth) ? auth.slice(7).trim() : undefined
  return ctx.tokens.authenticate(bearer)
}

/** Paths of the token-protected COBS APIs (not OAuth, the sign pages or the simulator's admin). */
export function isApiPath(path: string): boolean {
  return !path.startsWith('/oauth2/') && !path.startsWith('/__admin') && !path.startsWith('/sign/')
}
