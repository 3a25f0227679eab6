import { randomUUID } from 'node:crypto'
import {
  AISP_CONSENT_DAYS,
  BankAuthorizationCallbackError,
  BankOAuthError,
  BankProtocolError,
  BankConsentRevokedError,
  type BankClient,
} from '@tep/bank-client'
import { errorCode } from '@tep/errors'
import type { RecordProducer, TopicCodec } from '@tep/kafka'
import type { Consent } from '@tep/schemas'
import type { TokenCipher } from '@tep/token-cipher'
import { sealConsentToken } from './consent-binding.ts'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { AuthorizationStateClaims, AuthorizationStateSigner } from './authorization-state.ts'
import { clearCookie, cookieName, createBinding, matches, readCookie, setCookie } from './browser-binding.ts'
import { CallbackBudgetExceededError, type CallbackBudget } from './callback-budget.ts'
import { CustomerLimit, CustomerLimitExceededError } from './customer-limit.ts'
import { CustomerAuthError, type CustomerTokenVerifier } from './customer-token.ts'
import { isTerminal } from './consent-status.ts'
import type { SyncLogger } from './consent-syncer.ts'
import { publicConsent, type ConsentView } from './consent-view.ts'
import { ConsentStateError } from './errors.ts'
import type { BankSyncMetrics } from './metrics.ts'

const DAY_MS = 86_400_000

export interface ConsentGatewayOptions {
  bank: BankClient
  cipher: TokenCipher
  signer: AuthorizationStateSigner
  view: ConsentView
  /** An idempotent (non-transactional, acks all) producer for the consents topic. */
  producer: RecordProducer
  consentsTopic: string
  consentCodec: TopicCodec<Consent>
  metrics: BankSyncMetrics
  logger: SyncLogger
  now: () => number
  /** Verifies the bank application's customer token (the only source of a customer id). */
  customers: CustomerTokenVerifier
  /** The callbacks' bounded share of the bank's token endpoint. */
  callbackBudget: CallbackBudget
  /** Secure cookies and HSTS: true unless the gateway is plain HTTP on loopback. */
  secure: boolean
  /** PKCE S256 with the bank (default true; turn off only for a bank that refuses it). */
  pkce?: boolean
  /** Abuse limits of the HTTP server and per customer; DEFAULT_GATEWAY_LIMITS for what is not given. */
  limits?: Partial<GatewayLimits>
}

/**
 * What one client may cost the gateway. Fastify's defaults have no request
 * timeout and no connection cap, so a slow client (headers or body one byte at a
 * time) could hold sockets forever.
 */
export interface GatewayLimits {
  /** Whole request (headers and body) received within this, else 408 and closed. */
  requestTimeoutMs: number
  /** Headers received within this (at most requestTimeoutMs). */
  headersTimeoutMs: number
  /**
   * A socket with no traffic at all is closed after this, even while its answer is
   * pending: longer than a callback can wait for its code exchange (queue and
   * running slots, each exchange bounded by the bank client's timeout).
   */
  idleTimeoutMs: number
  /** Open connections at once; beyond, new ones are dropped. */
  maxConnections: number
  /** Largest body (POST /consents takes a tiny JSON). */
  bodyLimitBytes: number
  /** Consent starts, and callbacks, per customer and window. */
  perCustomer: { max: number; windowMs: number }
}

export const DEFAULT_GATEWAY_LIMITS: GatewayLimits = {
  requestTimeoutMs: 10_000,
  headersTimeoutMs: 5_000,
  idleTimeoutMs: 120_000,
  maxConnections: 256,
  bodyLimitBytes: 4096,
  perCustomer: { max: 10, windowMs: 10 * 60_000 },
}

/**
 * Headers of every gateway answer: its pages embed nothing and are embedded
 * nowhere (clickjacking of the consent flow), leak no URL (the callback URL holds
 * the code and state) and are never cached.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

interface ApiError {
  status: number
  code: string
  message: string
}

function wantsHtml(req: FastifyRequest): boolean {
  const accept = req.headers.accept ?? ''
  return accept.includes('text/html')
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

function sendError(req: FastifyRequest, reply: FastifyReply, e: ApiError): FastifyReply {
  if (wantsHtml(req)) {
    return reply
      .code(e.status)
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html><html><head><meta charset="utf-8"><title>Bank consent</title></head><body>` +
          `<h1>The bank consent was not recorded</h1><p>${escapeHtml(e.message)}</p><p><small>${escapeHtml(e.code)}</small></p></body></html>`,
      )
  }
  return reply.code(e.status).send({ error: e.code, message: e.message })
}

/**
 * The consent gateway: starts the bank's authorization-code flow for a customer,
 * receives the bank's redirect, exchanges the code and records the consent (tokens
 * sealed) in the consents topic; shows and ends consents. Routes:
 * POST /consents, GET /consents/start, GET /consents/callback, GET /consents/:id,
 * DELETE /consents/:id.
 */
export function buildConsentGateway(o: ConsentGatewayOptions): FastifyInstance {
  const limits: GatewayLimits = { ...DEFAULT_GATEWAY_LIMITS, ...o.limits }
  const headersTimeoutMs = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs)
  const app = Fastify({
    logger: false,
    bodyLimit: limits.bodyLimitBytes,
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: Math.min(5_000, limits.idleTimeoutMs),
    // Node checks the request and headers timeouts only every connectionsCheckingInterval (30 s by default).
    http: { headersTimeout: headersTimeoutMs, connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 2))) },
  })
  app.server.maxConnections = limits.maxConnections
  const count = (route: string, outcome: string) => o.metrics.gatewayRequests.inc({ route, outcome })
  const perCustomer = new CustomerLimit({ ...limits.perCustomer, now: o.now })

  const pkce = o.pkce ?? true
  // The customer of a request, verified in onRequest: before any body is read or parsed.
  const customers = new WeakMap<FastifyRequest, string>()
  const customerOf = (req: FastifyRequest): string => {
    const customerId = customers.get(req)
    if (customerId === undefined) throw new CustomerAuthError('MISSING', 'no verified customer token on this request')
    return customerId
  }
  const authenticate = async (req: FastifyRequest): Promise<void> => {
    customers.set(req, await o.customers.customerOf(req.headers.authorization))
  }

  const begin = (
    customerId: string,
    claimed: unknown,
    scope: unknown,
  ): ApiError | { consentId: string; url: string; expiresAt: number; secret: string } => {
    if (claimed !== undefined && claimed !== customerId) {
      return {
        status: 403,
        code: 'CUSTOMER_MISMATCH',
        message: 'customerId in the body differs from the customer of the token; omit it (the token says who the customer is)',
      }
    }
    if (scope !== undefined && scope !== 'AISP') {
      return {
        status: 400,
        code: 'SCOPE_UNSUPPORTED',
        message: `bank-sync reads accounts: scope must be AISP (or omitted), got ${JSON.stringify(scope)}`,
      }
    }
    const consentId = randomUUID()
    const binding = createBinding()
    const { state, claims } = o.signer.issue({ consentId, customerId, scope: 'AISP', binding: binding.hash })
    const url = o.bank.authorization.buildAuthorizationUrl({
      scope: 'AISP',
      state,
      ...(pkce ? { codeChallenge: binding.hash } : {}),
    })
    return { consentId, url, expiresAt: claims.expiresAt, secret: binding.secret }
  }

  app.addHook('onSend', async (_req, reply) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) void reply.header(name, value)
    if (o.secure) void reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains')
  })

  // Kafka or the registry failing while recording: say so instead of a bare 500 (nothing was recorded).
  app.setErrorHandler((err, req, reply) => {
    if (err instanceof CustomerAuthError) {
      count(req.routeOptions.url ?? 'unknown', 'unauthenticated')
      void reply.header('www-authenticate', `Bearer error="invalid_token"`)
      return sendError(req, reply, { status: 401, code: err.code, message: err.message })
    }
    if (err instanceof CustomerLimitExceededError) {
      count(req.routeOptions.url ?? 'unknown', 'customer_limit')
      o.logger.warn({ route: req.routeOptions.url, code: err.code }, 'consent gateway: customer over its limit')
      void reply.header('retry-after', String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))))
      return sendError(req, reply, { status: 429, code: err.code, message: err.message })
    }
    const status =
      typeof (err as { statusCode?: unknown }).statusCode === 'number'
        ? (err as { statusCode: number }).statusCode
        : 503
    if (status < 500) {
      // The client's mistake (a bad or oversized body): warn, and never log what it sent.
      const code = typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : 'BAD_REQUEST'
      o.logger.warn({ route: req.routeOptions.url, status, code }, 'consent gateway refused a request')
      count(req.routeOptions.url ?? 'unknown', 'refused')
      return sendError(req, reply, { status, code: 'BAD_REQUEST', message: (err as Error).message })
    }
    o.logger.error({ err, route: req.routeOptions.url }, 'consent gateway request failed')
    count(req.routeOptions.url ?? 'unknown', 'error')
    return sendError(req, reply, {
      status: 503,
      code: 'CONSENT_NOT_RECORDED',
      message:
        'the consent could not be recorded right now; nothing was stored, please start the consent again in a moment',
    })
  })

  // Liveness of the gateway itself (the service's /healthz and /readyz are on METRICS_PORT).
  app.get('/healthz', async () => ({ status: 'ok' }))

  // The token, then the customer's limit, both before the body is read.
  const startHook = async (req: FastifyRequest) => {
    await authenticate(req)
    perCustomer.take('start', customerOf(req))
  }
  app.post('/consents', { onRequest: startHook }, async (req, reply) => {
    const customerId = customerOf(req)
    const body = (req.body ?? {}) as { customerId?: unknown; scope?: unknown }
    const r = begin(customerId, body.customerId, body.scope)
    if ('status' in r) {
      count('start', 'invalid')
      return sendError(req, reply, r)
    }
    count('start', 'ok')
    void reply.header(
      'set-cookie',
      setCookie(r.consentId, r.secret, { secure: o.secure, maxAgeS: Math.ceil(o.signer.ttlMs / 1000) }),
    )
    return reply.code(201).send({
      consentId: r.consentId,
      authorizationUrl: r.url,
      authorizationExpiresAt: new Date(r.expiresAt).toISOString(),
    })
  })

  // A consent started from a plain link would take the identity from the link, so
  // anyone could send a victim a link with theirs: starting is POST with the token only.
  app.get('/consents/start', async (req, reply) => {
    count('start', 'link_refused')
    return sendError(req, reply, {
      status: 410,
      code: 'CONSENT_START_BY_LINK_REMOVED',
      message:
        'a consent cannot be started from a link; the bank application starts it with POST /consents and the customer token',
    })
  })

  app.get('/consents/callback', async (req, reply) => {
    const q = req.query as Record<string, unknown>
    const state = typeof q.state === 'string' ? q.state : ''
    if (state === '') {
      count('callback', 'no_state')
      return sendError(req, reply, {
        status: 400,
        code: 'CONSENT_STATE_MISSING',
        message: 'the callback carries no state; open the consent link from the application again',
      })
    }
    let claims: AuthorizationStateClaims
    try {
      claims = o.signer.verify(state)
    } catch (err) {
      if (!(err instanceof ConsentStateError)) throw err
      count('callback', `state_${err.problem.toLowerCase()}`)
      return sendError(req, reply, { status: 400, code: err.code, message: err.message })
    }
    // The browser that started the flow holds the secret whose hash the state names.
    const secret = readCookie(req.headers.cookie, cookieName(claims.consentId, o.secure))
    if (!matches(secret, claims.binding)) {
      count('callback', 'other_browser')
      o.logger.warn({ consentId: claims.consentId }, 'consent callback from a browser that did not start it')
      return sendError(req, reply, {
        status: 403,
        code: 'CONSENT_BROWSER_MISMATCH',
        message:
          'this consent was started in another browser (or its cookie was lost); nothing was recorded. Start the consent again from the bank application in this browser',
      })
    }
    // Each callback costs a code exchange: the customer the signed state names pays for it.
    perCustomer.take('callback', claims.customerId)
    try {
      o.signer.begin(state)
    } catch (err) {
      if (!(err instanceof ConsentStateError)) throw err
      count('callback', `state_${err.problem.toLowerCase()}`)
      return sendError(req, reply, { status: 400, code: err.code, message: err.message })
    }
    // Already recorded, here or by another replica (the view reads the whole consents topic):
    // the browser came back twice (reload, back button, a retry routed to another replica).
    // Never exchange the code a second time: a bank that sees an authorization code replayed
    // revokes every token issued for it (RFC 6749 §4.1.2), which would end the consent just
    // recorded. A second callback racing the first within the view's lag is not caught here.
    const recorded = o.view.get(claims.consentId)
    if (recorded !== undefined && recorded.customerId === claims.customerId) {
      o.signer.complete(claims)
      count('callback', 'already_recorded')
      void reply.header('set-cookie', clearCookie(claims.consentId, { secure: o.secure }))
      const message = `consent ${claims.consentId} is already recorded (${recorded.status}); nothing was done again`
      if (wantsHtml(req))
        return reply
          .code(409)
          .type('text/html; charset=utf-8')
          .send(`<!doctype html><html><head><meta charset="utf-8"><title>Bank consent</title></head><body><h1>Already connected</h1><p>${escapeHtml(message)}</p></body></html>`)
      return reply.code(409).send({ error: 'CONSENT_ALREADY_RECORDED', message, consent: publicConsent(recorded) })
    }
    try {
      return await finishCallback(req, reply, claims, secret as string, state)
    } finally {
      // Whatever did not complete may be retried with the same callback URL.
      o.signer.release(claims)
    }
  })

  const finishCallback = async (
    req: FastifyRequest,
    reply: FastifyReply,
    claims: AuthorizationStateClaims,
    secret: string,
    state: string,
  ): Promise<FastifyReply> => {
    let code: string
    try {
      ;({ code } = o.bank.authorization.parseCallback(new URL(req.url, 'http://gateway.invalid'), state))
    } catch (err) {
      if (!(err instanceof BankAuthorizationCallbackError)) throw err
      if (err.code === 'AUTHORIZATION_DENIED') {
        o.signer.complete(claims)
        count('callback', 'denied')
        return sendError(req, reply, {
          status: 403,
          code: 'CONSENT_DENIED',
          message: 'access to the bank accounts was declined at the bank; nothing was recorded',
        })
      }
      count('callback', 'bank_error')
      return sendError(req, reply, { status: 502, code: err.code, message: err.message })
    }
    let tokens
    try {
      tokens = await o.callbackBudget.run(() =>
        o.bank.authorization.exchangeCode(code, { scope: 'AISP', ...(pkce ? { codeVerifier: secret } : {}) }),
      )
    } catch (err) {
      if (err instanceof CallbackBudgetExceededError) {
        count('callback', 'busy')
        void reply.header('retry-after', '5')
        return sendError(req, reply, { status: 503, code: err.code, message: err.message })
      }
      count('callback', 'exchange_failed')
      o.logger.warn(
        // `field`: what a token answer the client cannot use lacked (BANK_PROTOCOL_ERROR).
        { code: errorCode(err), consentId: claims.consentId, field: err instanceof BankProtocolError ? err.details.field : undefined },
        'authorization code exchange failed',
      )
      const refused = err instanceof BankOAuthError || err instanceof BankConsentRevokedError
      // A refused code stays refused; an unreachable bank may answer a retry of this callback.
      if (refused) o.signer.complete(claims)
      return sendError(req, reply, {
        status: refused ? 400 : 502,
        code: refused ? 'AUTHORIZATION_CODE_REFUSED' : 'BANK_UNAVAILABLE',
        message: refused
          ? 'the bank refused the authorization code (expired or already used); start the consent again'
          : 'the bank could not be reached to complete the consent; try again in a moment',
      })
    }
    const now = o.now()
    const grantedAt = tokens.obtainedAt.getTime()
    const consent: Consent = {
      consentId: claims.consentId,
      customerId: claims.customerId,
      bank: null,
      status: 'ACTIVE',
      statusReason: 'GRANTED',
      scopes: [tokens.scope],
      accessToken: sealConsentToken(o.cipher, tokens.accessToken, claims),
      refreshToken: sealConsentToken(o.cipher, tokens.refreshToken, claims),
      accessTokenExpiresAt: tokens.accessTokenExpiresAt.getTime(),
      refreshTokenExpiresAt: tokens.refreshTokenExpiresAt?.getTime() ?? null,
      tokenIssuedAt: grantedAt,
      grantedAt,
      expiresAt: tokens.refreshTokenExpiresAt?.getTime() ?? grantedAt + AISP_CONSENT_DAYS * DAY_MS,
      expiryNotifiedAt: null,
      authorizationStateHash: null,
      accounts: [],
      version: 1,
      updatedAt: now,
    }
    try {
      await write(o, consent)
    } catch (err) {
      // Nothing records the grant, so nothing would ever use or end it: revoke it.
      o.signer.complete(claims)
      await revokeGrant(code, secret, claims.consentId)
      throw err
    }
    o.signer.complete(claims)
    void reply.header('set-cookie', clearCookie(claims.consentId, { secure: o.secure }))
    count('callback', 'granted')
    o.logger.info(
      { consentId: consent.consentId, customerId: consent.customerId },
      'consent granted and recorded',
    )
    if (wantsHtml(req)) {
      return reply
        .code(201)
        .type('text/html; charset=utf-8')
        .send(
          `<!doctype html><html><head><meta charset="utf-8"><title>Bank consent</title></head><body>` +
            `<h1>Bank accounts connected</h1><p>Consent <code>${escapeHtml(consent.consentId)}</code> is active; ` +
            `transactions will appear shortly.</p></body></html>`,
        )
    }
    return reply.code(201).send(publicConsent(consent))
  }

  /**
   * The bank API has no revocation endpoint. RFC 6749 §4.1.2 has the bank revoke the
   * tokens issued from a code used twice, and the bank spec says it does (ASSUMPTION
   * in schemas/openapi/bank-open-banking.yaml, implemented by the simulator): the code
   * is exchanged once more and the bank's refusal is the revocation.
   */
  const revokeGrant = async (code: string, verifier: string, consentId: string): Promise<void> => {
    try {
      // The same request as the first exchange, so nothing but the reuse can refuse it.
      await o.callbackBudget.run(() =>
        o.bank.authorization.exchangeCode(code, { scope: 'AISP', ...(pkce ? { codeVerifier: verifier } : {}) }),
      )
      o.logger.error({ consentId }, 'consent not recorded, and replaying its code did not revoke the bank grant: it stays live at the bank until it expires')
    } catch (err) {
      const revoked = err instanceof BankOAuthError || err instanceof BankConsentRevokedError
      if (revoked) o.logger.warn({ consentId }, 'consent not recorded; its bank grant was revoked (authorization code replayed)')
      else o.logger.error({ consentId, code: errorCode(err) }, 'consent not recorded, and its bank grant could not be revoked: it stays live at the bank until it expires')
    }
    count('callback', 'not_recorded')
  }

  // Another customer's consent is "not found": its existence is not theirs to learn.
  app.get('/consents/:id', { onRequest: authenticate }, async (req, reply) => {
    const customerId = customerOf(req)
    const { id } = req.params as { id: string }
    const consent = o.view.get(id)
    if (consent === undefined || consent.customerId !== customerId) {
      count('get', 'not_found')
      return sendError(req, reply, { status: 404, code: 'CONSENT_NOT_FOUND', message: `no consent ${id}` })
    }
    count('get', 'ok')
    return reply.send(publicConsent(consent))
  })

  app.delete('/consents/:id', { onRequest: authenticate }, async (req, reply) => {
    const customerId = customerOf(req)
    const { id } = req.params as { id: string }
    const consent = o.view.get(id)
    if (consent === undefined || consent.customerId !== customerId) {
      count('end', 'not_found')
      return sendError(req, reply, { status: 404, code: 'CONSENT_NOT_FOUND', message: `no consent ${id}` })
    }
    if (isTerminal(consent.status)) {
      count('end', 'already_terminal')
      return reply.send(publicConsent(consent))
    }
    const ended: Consent = {
      ...consent,
      status: 'ENDED',
      statusReason: 'CUSTOMER_REQUEST',
      accessToken: null,
      refreshToken: null,
      accessTokenExpiresAt: null,
      version: consent.version + 1,
      updatedAt: o.now(),
    }
    await write(o, ended)
    count('end', 'ok')
    o.logger.info({ consentId: id }, 'consent ended on request')
    return reply.send(publicConsent(ended))
  })

  return app
}

async function write(o: ConsentGatewayOptions, consent: Consent): Promise<void> {
  await o.producer.send(o.consentsTopic, [{ key: consent.consentId, value: await o.consentCodec.encode(consent) }])
  o.view.apply(consent)
}
