import type { FastifyInstance, FastifyReply } from 'fastify'
import { OAuthError } from '../errors.ts'
import { errorBox, escapeHtml, hidden, loginFields, page } from '../http/html.ts'
import type { SimContext } from '../sim-context.ts'
import type { SimAccount } from '../data/world.ts'
import type { AuthorizationRequest } from './authorization-requests.ts'
import type { AuthorizationOperation } from './rate-limiter.ts'
import { isScope, type Scope } from './token-service.ts'
import type { RegisteredClient } from './registered-client.ts'

type Form = Record<string, string | string[] | undefined>

function first(value: unknown): string | undefined {
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined
  return typeof value === 'string' ? value : undefined
}

const SCOPE_TEXT: Record<Scope, string> = {
  AISP: 'read the balances and the transaction history of the selected accounts, and their standing orders',
  PISP: 'initiate payments and standing orders from the selected accounts (each one you still authorize separately)',
  CISP: 'ask whether the selected accounts have enough money for a card payment',
}

/** Accounts a consent of this scope can cover: payments only from current accounts. */
export function eligibleAccounts(ctx: SimContext, userId: string, scope: Scope): SimAccount[] {
  return ctx.bank.accountsOf(userId).filter((a) => scope !== 'PISP' || a.kind === 'CURRENT')
}

function redirectTo(reply: FastifyReply, base: string, params: Record<string, string | undefined>): FastifyReply {
  const u = new URL(base)
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v)
  return reply.code(302).header('location', u.toString()).header('cache-control', 'no-store').send()
}

function htmlError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page('Authorization error', `<h1>Authorization cannot continue</h1>${errorBox(message)}`))
}

function rateLimited(ctx: SimContext, reply: FastifyReply, op: AuthorizationOperation, clientId: string): boolean {
  const retryAfter = ctx.rateLimiter.take(op, clientId)
  if (retryAfter === undefined) return false
  void reply
    .code(429)
    .header('retry-after', String(retryAfter))
    .send({ error: 'too_many_requests', error_description: `more than ${ctx.rateLimiter.limitPerHour} calls of ${op} in one hour for client ${clientId}; retry after ${retryAfter} s` })
  return true
}

function loginPage(request: AuthorizationRequest, client: RegisteredClient, error?: string): string {
  return page(
    'Log in',
    `<h1>Log in to your bank</h1>
<p><strong>${escapeHtml(client.name ?? client.clientId)}</strong> asks for access (${escapeHtml(request.scope)}).</p>
${errorBox(error)}
<form method="post" action="/oauth2/authorize">
${hidden({ step: 'login', request: request.id })}
${loginFields()}
<button type="submit">Log in</button>
</form>
<p class="note">Test clients: user1 / password1, user2 / password2, ...</p>`,
  )
}

function consentPage(ctx: SimContext, request: AuthorizationRequest, client: RegisteredClient, error?: string): string {
  const accounts = eligibleAccounts(ctx, request.userId as string, request.scope)
  const user = ctx.bank.user(request.userId as string)
  const rows = accounts
    .map(
      (a) =>
        `<tr><td><input type="checkbox" name="accounts" value="${escapeHtml(a.id)}" id="acc-${escapeHtml(a.id)}" checked></td><td><label for="acc-${escapeHtml(a.id)}">${escapeHtml(a.name)}</label></td><td>${escapeHtml(a.iban)}</td><td>${escapeHtml(a.currency)}</td></tr>`,
    )
    .join('\n')
  return page(
    'Consent',
    `<h1>Give consent</h1>
<p>Logged in as <strong>${escapeHtml(user?.fullName ?? '')}</strong>.</p>
<p><strong>${escapeHtml(client.name ?? client.clientId)}</strong> wants to ${escapeHtml(SCOPE_TEXT[request.scope])}.</p>
${errorBox(error)}
<form method="post" action="/oauth2/authorize">
${hidden({ step: 'consent', request: request.id })}
<table>${rows}</table>
<button type="submit" name="decision" value="grant">Grant access</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  )
}

/** `GET/POST /oauth2/authorize` (HTML pages) and `POST /oauth2/token`. */
export function registerOAuthRoutes(app: FastifyInstance, ctx: SimContext): void {
  app.get('/oauth2/authorize', async (req, reply) => {
    const q = req.query as Record<string, unknown>
    const clientId = first(q.client_id)
    if (rateLimited(ctx, reply, 'GET /oauth2/authorize', clientId ?? '(none)')) return reply
    const client = clientId === undefined ? undefined : ctx.clients.get(clientId)
    if (!client) return htmlError(reply, 400, `client_id ${clientId === undefined ? '(missing)' : JSON.stringify(clientId)} is not a registered application`)
    const sent = first(q.redirect_uri)
    let redirectUri: string
    if (sent !== undefined) {
      if (!client.redirectUris.includes(sent)) return htmlError(reply, 400, `redirect_uri ${JSON.stringify(sent)} is not registered for this application`)
      redirectUri = sent
    } else if (client.redirectUris.length === 1) {
      redirectUri = client.redirectUris[0] as string
    } else {
      return htmlError(reply, 400, 'redirect_uri is required: the application has several registered redirect URIs')
    }
    const state = first(q.state)
    if (first(q.response_type) !== 'code') {
      return redirectTo(reply, redirectUri, { error: 'unsupported_response_type', error_description: 'response_type must be code', state })
    }
    const scope = first(q.scope)
    if (!isScope(scope)) {
      return redirectTo(reply, redirectUri, { error: 'invalid_scope', error_description: 'scope must be exactly one of AISP, PISP, CISP', state })
    }
    // PKCE (RFC 7636): S256 only; `plain` protects nothing against a stolen code.
    const codeChallenge = first(q.code_challenge)
    const method = first(q.code_challenge_method)
    if (codeChallenge !== undefined || method !== undefined) {
      if (method !== 'S256') {
        return redirectTo(reply, redirectUri, { error: 'invalid_request', error_description: 'code_challenge_method must be S256 (plain is not accepted)', state })
      }
      if (codeChallenge === undefined || !/^[A-Za-z0-9_-]{43}$/.test(codeChallenge)) {
        return redirectTo(reply, redirectUri, { error: 'invalid_request', error_description: 'code_challenge must be the base64url SHA-256 of the code_verifier (43 characters)', state })
      }
    }
    const request = ctx.authRequests.open({ clientId: client.clientId, redirectUri, redirectUriSent: sent, scope, state, codeChallenge })
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(loginPage(request, client))
  })

  app.post('/oauth2/authorize', async (req, reply) => {
    const form = (req.body ?? {}) as Form
    const request = ctx.authRequests.get(first(form.request))
    const clientKey = request?.clientId ?? first(form.client_id) ?? '(none)'
    if (rateLimited(ctx, reply, 'POST /oauth2/authorize', clientKey)) return reply
    if (!request) return htmlError(reply, 400, 'this authorization request is unknown or has expired; go back to the application and start again')
    const client = ctx.clients.get(request.clientId) as RegisteredClient
    const step = first(form.step)
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store')
    if (step === 'login') {
      const user = ctx.bank.login(first(form.username) ?? '', first(form.password) ?? '')
      if (!user) return reply.code(401).send(loginPage(request, client, 'Wrong username or password.'))
      request.userId = user.id
      return reply.send(consentPage(ctx, request, client))
    }
    if (step !== 'consent' || request.userId === undefined) return htmlError(reply, 400, 'log in first')
    const decision = first(form.decision)
    if (decision === 'deny') {
      ctx.authRequests.close(request.id)
      return redirectTo(reply, request.redirectUri, { error: 'access_denied', error_description: 'the user denied access', state: request.state })
    }
    if (decision !== 'grant') return htmlError(reply, 400, 'choose Grant access or Deny')
    const chosen = form.accounts === undefined ? [] : Array.isArray(form.accounts) ? form.accounts : [form.accounts]
    const eligible = new Set(eligibleAccounts(ctx, request.userId, request.scope).map((a) => a.id))
    if (chosen.length === 0 || !chosen.every((id) => eligible.has(id))) {
      return reply.code(400).send(consentPage(ctx, request, client, 'Select at least one of your accounts.'))
    }
    ctx.authRequests.close(request.id)
    const { code } = ctx.tokens.grant({ clientId: request.clientId, userId: request.userId, scope: request.scope, accountIds: chosen, redirectUri: request.redirectUriSent, codeChallenge: request.codeChallenge })
    return redirectTo(reply, request.redirectUri, { code, state: request.state })
  })

  app.post('/oauth2/token', async (req, reply) => {
    const form = (req.body ?? {}) as Form
    let basic: { id: string; secret: string } | undefined
    const auth = req.headers.authorization
    if (auth?.startsWith('Basic ')) {
      const decoded = Buffer.from(auth.slice(6), 'base64').toString('utf8')
      const i = decoded.indexOf(':')
      if (i < 0) throw new OAuthError(401, 'invalid_client', 'HTTP Basic credentials must be client_id:client_secret', { 'www-authenticate': 'Basic realm="bank-sim"' })
      basic = { id: decodeURIComponent(decoded.slice(0, i)), secret: decodeURIComponent(decoded.slice(i + 1)) }
    }
    const bodyId = first(form.client_id)
    const bodySecret = first(form.client_secret)
    if (basic && bodyId !== undefined && bodyId !== basic.id) throw new OAuthError(400, 'invalid_request', 'client_id in the body differs from the HTTP Basic client')
    const clientId = basic?.id ?? bodyId
    if (rateLimited(ctx, reply, 'POST /oauth2/token', clientId ?? '(none)')) return reply
    const secret = basic?.secret ?? bodySecret
    const client = clientId === undefined ? undefined : ctx.clients.get(clientId)
    if (!client || secret === undefined || client.clientSecret !== secret) {
      throw new OAuthError(401, 'invalid_client', 'unknown client or wrong client secret', basic ? { 'www-authenticate': 'Basic realm="bank-sim"' } : {})
    }
    for (const [k, v] of Object.entries(form)) if (Array.isArray(v)) throw new OAuthError(400, 'invalid_request', `parameter ${k} is repeated`)
    const grantType = first(form.grant_type)
    let tokens
    if (grantType === 'authorization_code') {
      const code = first(form.code)
      if (!code) throw new OAuthError(400, 'invalid_request', 'code is required for grant_type authorization_code')
      tokens = ctx.tokens.exchangeCode({ code, clientId: client.clientId, redirectUri: first(form.redirect_uri), codeVerifier: first(form.code_verifier) })
    } else if (grantType === 'refresh_token') {
      const refreshToken = first(form.refresh_token)
      if (!refreshToken) throw new OAuthError(400, 'invalid_request', 'refresh_token is required for grant_type refresh_token')
      tokens = ctx.tokens.refresh({ refreshToken, clientId: client.clientId })
    } else if (grantType === undefined) {
      throw new OAuthError(400, 'invalid_request', 'grant_type is required')
    } else {
      throw new OAuthError(400, 'unsupported_grant_type', `grant_type ${grantType} is not supported; use authorization_code or refresh_token`)
    }
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens)
  })
}
