import { createServer as createHttpsServer } from 'node:https'
import Fastify, { LogController, type FastifyInstance, type FastifyBaseLogger, type FastifyServerFactory } from 'fastify'
import { selfSignedCertificate, type TlsMaterial } from './tls.ts'
import formbody from '@fastify/formbody'
import { bankDate } from './core/bank-dates.ts'
import { SimClock } from './core/sim-clock.ts'
import { BankApiError, BankSimConfigError, OAuthError } from './errors.ts'
import { BankState } from './data/bank-state.ts'
import type { MerchantSource } from './data/merchant-source.ts'
import { simDataMerchantSource } from './data/sim-data-merchants.ts'
import type { DatasetOptions } from '@tep/sim-data'
import { buildWorld } from './data/world.ts'
import { registerAccountRoutes } from './http/account-routes.ts'
import { authenticateBearer, isApiPath } from './http/api-guard.ts'
import { ContractDriftMode } from './drift/contract-drift.ts'
import { registerContractDrift } from './drift/drift-hooks.ts'
import { FaultInjector } from './http/faults.ts'
import { registerPaymentRoutes } from './http/payment-routes.ts'
import { registerSignPages } from './http/sign-pages.ts'
import { Stats } from './http/stats.ts'
import { UnattendedAccessLimiter } from './http/unattended-access.ts'
import { registerAdminRoutes } from './admin/admin-routes.ts'
import { AuthorizationRequests } from './oauth/authorization-requests.ts'
import { registerOAuthRoutes } from './oauth/oauth-routes.ts'
import { HourlyRateLimiter } from './oauth/rate-limiter.ts'
import { DEFAULT_REGISTERED_CLIENT, validateClient, type RegisteredClient } from './oauth/registered-client.ts'
import { TokenService, type TokenPolicy } from './oauth/token-service.ts'
import { DEFAULT_PAYMENT_LIMITS, type PaymentLimits } from './payments/limits.ts'
import { PaymentService } from './payments/payment-service.ts'
import { SigningSessions } from './payments/signing.ts'
import { StandingOrderService } from './standing-orders/standing-order-service.ts'
import type { SimContext } from './sim-context.ts'

export interface BankSimOptions {
  /** Listening port; 0 picks a free one (default 0 in-process, 8182 from the CLI). */
  port?: number
  host?: string
  /** Seed of the generated clients, accounts and histories (default `bank-sim`). */
  seed?: string
  /** Number of generated bank clients (test users), default 5. */
  clients?: number
  /** Days of generated history before the start day (default 730). */
  historyDays?: number
  /** Applications registered with the bank (default: `tep-sim-client`, see DEFAULT_REGISTERED_CLIENT). */
  registeredClients?: RegisteredClient[]
  tokenPolicy?: Partial<TokenPolicy>
  paymentLimits?: PaymentLimits
  /** Calls per hour of each authorization operation per client (default 10000). */
  authorizationRateLimitPerHour?: number
  /** PSD2 RTS limit of account reads per 24 h without the user present (default: no limit). */
  unattendedReadsPerDay?: number
  /** Card shops and merchant accounts (default: the enrichment simulator's data set, see `merchantData`). */
  merchants?: MerchantSource
  /**
   * Options of the `@tep/sim-data` data set the card payments and transfers point
   * to; keep them equal to the enrichment simulator's (default: seed 1, 50000
   * shops, 5000 merchants, its defaults).
   */
  merchantData?: DatasetOptions
  /** Initial clock offset from wall-clock time in ms. */
  clockOffsetMs?: number
  /** Wall clock (tests). */
  wallClock?: () => number
  /** pino-compatible logger; silent when absent. */
  logger?: FastifyBaseLogger
  /**
   * Seed of the contract-drift mode (drift/contract-drift.ts): answers the description allows
   * but the modelled bank never gives. Absent: off.
   */
  contractDrift?: string
  /** Serve HTTPS (TLS 1.2+): `true` generates a self-signed certificate (needs openssl), or give `{ key, cert }`. */
  https?: boolean | TlsMaterial
}

export interface BankSim {
  url: string
  port: number
  /** The certificate to trust when serving HTTPS. */
  ca?: string
  clock: SimClock
  context: SimContext
  close(): Promise<void>
}

const COBS_JSON = 'application/json'

function isOAuthPath(url: string): boolean {
  return url.startsWith('/oauth2/')
}

/** Builds the Fastify app without listening (tests may use `inject`). */
export function buildBankSim(options: BankSimOptions = {}, tls?: TlsMaterial): { app: FastifyInstance; context: SimContext } {
  const seed = options.seed ?? 'bank-sim'
  const clients = options.clients ?? 5
  if (!Number.isInteger(clients) || clients < 1 || clients > 1000) throw new BankSimConfigError(`clients must be 1 to 1000, got ${clients}`)
  const clock = new SimClock({ offsetMs: options.clockOffsetMs ?? 0, wallClock: options.wallClock })
  const initialOffset = clock.offsetMs
  const world = buildWorld({ seed, clients, today: bankDate(clock.now()), historyDays: options.historyDays ?? 730 })
  const bank = new BankState(world, options.merchants ?? simDataMerchantSource(options.merchantData ?? {}), clock)
  const registered = (options.registeredClients ?? [DEFAULT_REGISTERED_CLIENT]).map(validateClient)
  const payments = new PaymentService(bank, options.paymentLimits ?? DEFAULT_PAYMENT_LIMITS)
  const context: SimContext = {
    clock,
    bank,
    tokens: new TokenService(clock, options.tokenPolicy),
    payments,
    standingOrders: new StandingOrderService(bank),
    signing: new SigningSessions(clock),
    authRequests: new AuthorizationRequests(clock),
    rateLimiter: new HourlyRateLimiter(clock, options.authorizationRateLimitPerHour ?? 10_000),
    unattended: new UnattendedAccessLimiter(clock, options.unattendedReadsPerDay),
    faults: new FaultInjector(seed),
    stats: new Stats(),
    clients: new Map(registered.map((c) => [c.clientId, c])),
    drift: options.contractDrift === undefined ? undefined : new ContractDriftMode(options.contractDrift, options.logger),
  }
  const initialRateLimit = context.rateLimiter.limitPerHour

  // Fastify's own request lines would log raw URLs, and sign-page URLs are bearer links:
  // requests are logged below by route template instead.
  // Paths are matched exactly as the description writes them, as a strict gateway would:
  // `POST /payments/` only with its trailing slash, every other path only without one.
  const serverFactory: FastifyServerFactory | undefined =
    tls === undefined ? undefined : (handler) => createHttpsServer({ key: tls.key, cert: tls.cert, minVersion: 'TLSv1.2' }, handler) as unknown as ReturnType<FastifyServerFactory>
  const app = Fastify({
    ...(serverFactory ? { serverFactory } : {}),
    ...(options.logger ? { loggerInstance: options.logger, logController: new LogController({ disableRequestLogging: true }) } : { logger: false }),
  })
  void app.register(formbody)
  // Only JSON and forms: anything else is 415, as the COBS interfaces accept no other media type.
  app.removeContentTypeParser('text/plain')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    if (text.trim() === '') return done(null, undefined)
    try {
      done(null, JSON.parse(text))
    } catch {
      done(new BankApiError(400, { error: 'FF01', message: 'request body is not valid JSON' }), undefined)
    }
  })

  app.addHook('onRequest', async (req, reply) => {
    const requestId = req.headers['x-request-id']
    if (typeof requestId === 'string' && requestId !== '') void reply.header('x-request-id', requestId)
    const path = req.url.split('?')[0] ?? ''
    if (path.startsWith('/__admin') || path.startsWith('/sign/')) return
    const delay = context.faults.latencyMs(path)
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay))
    const decision = context.faults.decide(path)
    if (decision.kind === 'reset') {
      reply.hijack()
      req.raw.socket.destroy()
      return
    }
    if (decision.kind === 'throttle') {
      void reply.code(429).header('retry-after', String(decision.retryAfterSeconds))
      return reply.send(
        isOAuthPath(path)
          ? { error: 'too_many_requests', error_description: 'throttled by fault injection' }
          : { errors: [{ error: 'TOO_MANY_REQUESTS', scope: null, parameters: null, message: 'throttled; retry after the Retry-After seconds' }] },
      )
    }
    if (decision.kind === 'error') {
      void reply.code(decision.status)
      return reply.send(
        isOAuthPath(path)
          ? { error: decision.status >= 500 ? 'server_error' : 'invalid_request', error_description: 'injected fault' }
          : { errors: [{ error: 'NARR', scope: null, parameters: null, message: 'injected fault' }] },
      )
    }
    // Before the body is read, the route matched or any header checked: a call without a
    // valid token is answered 401 and nothing else (the route handlers check it again).
    if (isApiPath(path)) authenticateBearer(context, req)
  })

  app.addHook('onResponse', async (req, reply) => {
    const route = `${req.method} ${req.routeOptions.url ?? '(unmatched)'}`
    context.stats.record(route, reply.statusCode)
    req.log.debug({ route, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request')
  })

  app.setErrorHandler((err, req, reply) => {
    if (err instanceof BankApiError || err instanceof OAuthError) {
      for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v)
      return reply.code(err.status).type(COBS_JSON).send(err.body())
    }
    if (err instanceof BankSimConfigError) return reply.code(400).send({ error: err.code, message: err.message })
    const e = err as { code?: string; statusCode?: number; message?: string }
    const path = req.url.split('?')[0] ?? ''
    if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      if (isOAuthPath(path)) return reply.code(400).send({ error: 'invalid_request', error_description: 'the body must be application/x-www-form-urlencoded' })
      return reply.code(415).send({ errors: [{ error: 'UNSUPPORTED_MEDIA_TYPE', scope: 'Content-Type', parameters: null, message: `Content-Type ${String(req.headers['content-type'])} is not supported; send application/json` }] })
    }
    if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) {
      if (isOAuthPath(path)) return reply.code(400).send({ error: 'invalid_request', error_description: e.message ?? 'bad request' })
      return reply.code(e.statusCode).send({ errors: [{ error: 'FF01', scope: null, parameters: null, message: e.message ?? 'bad request' }] })
    }
    req.log.error({ err }, 'bank-sim internal error')
    return reply.code(500).send({ errors: [{ error: 'NARR', scope: null, parameters: null, message: 'internal error of the simulator' }] })
  })

  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).send({ errors: [{ error: 'NOT_FOUND', scope: null, parameters: null, message: `no operation ${req.method} ${req.url.split('?')[0]}` }] })
  })

  if (context.drift !== undefined) registerContractDrift(app, context.drift)
  registerOAuthRoutes(app, context)
  registerAccountRoutes(app, context)
  registerPaymentRoutes(app, context)
  registerSignPages(app, context)
  registerAdminRoutes(app, context, () => {
    clock.resetOffset(initialOffset)
    context.tokens.clear()
    context.payments.clear()
    bank.ledger.clearExtra()
    context.standingOrders.reset()
    context.signing.clear()
    context.authRequests.clear()
    context.rateLimiter.setLimit(initialRateLimit)
    context.unattended.set(options.unattendedReadsPerDay)
    context.faults.clear()
    context.stats.reset()
  })
  return { app, context }
}

/** Starts the simulator on `host:port` and resolves once it listens. */
export async function startBankSim(options: BankSimOptions = {}): Promise<BankSim> {
  const tls = options.https === true ? await selfSignedCertificate() : options.https === false || options.https === undefined ? undefined : options.https
  const { app, context } = buildBankSim(options, tls)
  const host = options.host ?? '127.0.0.1'
  await app.listen({ port: options.port ?? 0, host })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 0)
  const shownHost = host.includes(':') ? `[${host}]` : host
  return {
    url: `${tls === undefined ? 'http' : 'https'}://${shownHost}:${port}`,
    port,
    ...(tls === undefined ? {} : { ca: tls.cert }),
    clock: context.clock,
    context,
    close: async () => {
      await app.close()
    },
  }
}
