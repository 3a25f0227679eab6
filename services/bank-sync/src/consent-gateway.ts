import { randomUUID } from 'node:crypto'
import type { Consent } from '@tep/schemas'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { createBinding, setCookie } from './browser-binding.ts'
import { registerCallbackRoute } from './consent-callback.ts'
import { isTerminal } from './consent-status.ts'
import { publicConsent } from './consent-view.ts'
import { writeConsent } from './consent-write.ts'
import { CustomerLimit, CustomerLimitExceededError } from './customer-limit.ts'
import { CustomerAuthError } from './customer-token.ts'
import { DEFAULT_GATEWAY_LIMITS, type GatewayLimits } from './gateway-limits.ts'
import type { ConsentGatewayOptions } from './gateway-options.ts'
import { sendError, SECURITY_HEADERS, type ApiError } from './gateway-pages.ts'


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

  registerCallbackRoute(app, o, { count, pkce, perCustomer })

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
    await writeConsent(o, ended)
    count('end', 'ok')
    o.logger.info({ consentId: id }, 'consent ended on request')
    return reply.send(publicConsent(ended))
  })

  return app
}
