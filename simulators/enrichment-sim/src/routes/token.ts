import type { FastifyInstance, FastifyRequest } from 'fastify'
import { parseBasic } from '../core/credentials.ts'
import { OAuthError } from '../errors.ts'
import { registerPath } from '../http/app.ts'
import type { SimContext } from '../http/context.ts'

export const TOKEN_PATH = '/auth/protocol/openid-connect/token'

function field(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new OAuthError(400, 'invalid_request', `${name} must be given once`)
  return value
}

/** OAuth 2.0 client credentials grant (RFC 6749 section 4.4), client auth in the body or with HTTP Basic. */
export function registerTokenRoute(app: FastifyInstance, context: SimContext): void {
  registerPath(app, TOKEN_PATH, {
    POST: {
      operation: 'getToken',
      // Checked before parsing: a JSON body must be a 415, not a JSON parse error.
      gate: async (request: FastifyRequest) => {
        const type = request.headers['content-type']
        if (type === undefined || !/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
          throw new OAuthError(415, 'invalid_request', `the token request must be application/x-www-form-urlencoded, got ${type === undefined ? 'no Content-Type' : JSON.stringify(type)}`)
        }
      },
      handler: async (request: FastifyRequest, reply) => {
        const body = (request.body ?? {}) as Record<string, unknown>
        const grantType = field(body, 'grant_type')
        if (grantType === undefined || grantType === '') throw new OAuthError(400, 'invalid_request', 'grant_type is required (client_credentials)')
        if (grantType !== 'client_credentials') throw new OAuthError(400, 'unsupported_grant_type', `grant_type ${JSON.stringify(grantType)} is not supported; use client_credentials`)
        const header = request.headers.authorization
        const bodyId = field(body, 'client_id')
        const bodySecret = field(body, 'client_secret')
        let id: string | undefined
        let secret: string | undefined
        const viaBasic = header !== undefined && /^Basic\s/i.test(header)
        if (viaBasic) {
          if (bodySecret !== undefined) throw new OAuthError(400, 'invalid_request', 'use one client authentication method: HTTP Basic or client_secret in the body, not both')
          const basic = parseBasic(header as string)
          if (basic === undefined) throw new OAuthError(401, 'invalid_client', 'the Basic client credentials are malformed', { 'www-authenticate': 'Basic realm="enrichment-sim"' })
          // RFC 6749 2.3.1: Basic client credentials are form-urlencoded first.
          try {
            id = decodeURIComponent(basic.user.replace(/\+/g, ' '))
            secret = decodeURIComponent(basic.password.replace(/\+/g, ' '))
          } catch {
            throw new OAuthError(401, 'invalid_client', 'the Basic client credentials are not valid form-urlencoded text', { 'www-authenticate': 'Basic realm="enrichment-sim"' })
          }
        } else {
          id = bodyId
          secret = bodySecret
        }
        if (id === undefined || id === '' || secret === undefined || secret === '') {
          throw new OAuthError(400, 'invalid_request', 'client_id and client_secret are required (in the body or as HTTP Basic)')
        }
        const client = context.credentials.client(id, secret)
        if (client === undefined) {
          throw new OAuthError(401, 'invalid_client', 'unknown client or wrong client secret', viaBasic ? { 'www-authenticate': 'Basic realm="enrichment-sim"' } : {})
        }
        const issued = await context.tokens.issue(client.id, client.scopes)
        reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
        return { access_token: issued.token, token_type: 'Bearer', expires_in: issued.expiresIn, scope: issued.scope }
      },
    },
  })
}
