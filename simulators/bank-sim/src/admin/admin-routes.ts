import type { FastifyInstance } from 'fastify'
import { bankDate } from '../core/bank-dates.ts'
import { parseDuration } from '../core/sim-clock.ts'
import { BankSimConfigError } from '../errors.ts'
import { validateFaults } from '../http/faults.ts'
import { eligibleAccounts } from '../oauth/oauth-routes.ts'
import { isScope } from '../oauth/token-service.ts'
import type { SimContext } from '../sim-context.ts'
import { injectTransactions } from './injected-transactions.ts'

function obj(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BankSimConfigError('request body must be a JSON object')
  return body as Record<string, unknown>
}

/** Operations of the simulator itself, under `/__admin/` (no authentication: loopback sandbox). */
export function registerAdminRoutes(app: FastifyInstance, ctx: SimContext, reset: () => void): void {
  app.get('/__admin/clients', async () => ({
    users: ctx.bank.world.users.map((u) => ({
      userId: u.id,
      username: u.username,
      password: u.password,
      fullName: u.fullName,
      accounts: ctx.bank.accountsOf(u.id).map((a) => ({ id: a.id, iban: a.iban, currency: a.currency, kind: a.kind, name: a.name })),
    })),
    registeredClients: [...ctx.clients.values()].map((c) => ({ clientId: c.clientId, redirectUris: c.redirectUris, name: c.name })),
    merchantSource: ctx.bank.merchants.name,
    historyStart: ctx.bank.world.historyStart,
  }))

  app.post('/__admin/consents', async (req, reply) => {
    const b = obj(req.body)
    const user = typeof b.username === 'string' ? ctx.bank.userByUsername(b.username) : typeof b.userId === 'string' ? ctx.bank.user(b.userId) : undefined
    if (!user) throw new BankSimConfigError('username (or userId) must name a test client, e.g. "user1"')
    if (!isScope(b.scope)) throw new BankSimConfigError('scope must be one of AISP, PISP, CISP')
    const clientId = typeof b.clientId === 'string' ? b.clientId : ctx.clients.values().next().value?.clientId
    const client = clientId === undefined ? undefined : ctx.clients.get(clientId)
    if (!client) throw new BankSimConfigError(`clientId ${String(clientId)} is not a registered client`)
    const redirectUri = typeof b.redirectUri === 'string' ? b.redirectUri : (client.redirectUris[0] as string)
    if (!client.redirectUris.includes(redirectUri)) throw new BankSimConfigError(`redirectUri ${redirectUri} is not registered for ${client.clientId}`)
    const eligible = eligibleAccounts(ctx, user.id, b.scope).map((a) => a.id)
    let accountIds = eligible
    if (b.accountIds !== undefined) {
      if (!Array.isArray(b.accountIds) || b.accountIds.length === 0 || !b.accountIds.every((id) => typeof id === 'string' && eligible.includes(id))) {
        throw new BankSimConfigError(`accountIds must be a non-empty list of ${user.username}'s accounts eligible for ${b.scope}: ${eligible.join(', ')}`)
      }
      accountIds = b.accountIds as string[]
    }
    const state = typeof b.state === 'string' ? b.state : undefined
    // The PKCE challenge of the authorization URL the shortcut stands for (its code_challenge).
    if (b.codeChallenge !== undefined && (typeof b.codeChallenge !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(b.codeChallenge))) {
      throw new BankSimConfigError('codeChallenge must be the code_challenge of the authorization URL (43 base64url characters)')
    }
    const codeChallenge = typeof b.codeChallenge === 'string' ? b.codeChallenge : undefined
    const { code, consent, expiresInSeconds } = ctx.tokens.grant({ clientId: client.clientId, userId: user.id, scope: b.scope, accountIds, redirectUri, codeChallenge })
    const u = new URL(redirectUri)
    u.searchParams.set('code', code)
    if (state !== undefined) u.searchParams.set('state', state)
    return reply.code(201).send({ code, ...(state !== undefined ? { state } : {}), consentId: consent.id, clientId: client.clientId, redirectUri, redirectUrl: u.toString(), expiresIn: expiresInSeconds, scope: consent.scope, accountIds })
  })

  app.get('/__admin/consents', async () => ({
    consents: ctx.tokens.consents().map((c) => ({
      consentId: c.id,
      clientId: c.clientId,
      userId: c.userId,
      scope: c.scope,
      accountIds: c.accountIds,
      grantedAt: new Date(c.grantedAt).toISOString(),
      ...(c.expiresAt !== undefined ? { expiresAt: new Date(c.expiresAt).toISOString() } : {}),
      ...(c.revokedAt !== undefined ? { revokedAt: new Date(c.revokedAt).toISOString(), revokeReason: c.revokeReason } : {}),
      exchanged: c.exchanged,
      refreshGeneration: c.generation,
    })),
  }))

  app.post('/__admin/revoke', async (req) => {
    const b = obj(req.body)
    const consent = typeof b.consentId === 'string' ? ctx.tokens.consent(b.consentId) : typeof b.token === 'string' ? ctx.tokens.consentOfToken(b.token) : undefined
    if (!consent) throw new BankSimConfigError('consentId or token must name a consent (see GET /__admin/consents)')
    ctx.tokens.revokeConsent(consent.id)
    return { revoked: consent.id }
  })

  const clockView = () => {
    const now = ctx.clock.now()
    return { now: new Date(now).toISOString(), bankDate: bankDate(now), offsetMs: ctx.clock.offsetMs }
  }
  app.get('/__admin/clock', async () => clockView())
  app.post('/__admin/clock', async (req) => {
    const b = obj(req.body)
    try {
      if (b.advance !== undefined) ctx.clock.advance(typeof b.advance === 'number' ? b.advance : parseDuration(String(b.advance)))
      else if (b.offsetMs !== undefined) {
        if (typeof b.offsetMs !== 'number' || !Number.isFinite(b.offsetMs)) throw new RangeError('offsetMs must be a number of milliseconds')
        ctx.clock.advance(b.offsetMs - ctx.clock.offsetMs)
      } else if (b.set !== undefined) {
        const t = Date.parse(String(b.set))
        if (Number.isNaN(t)) throw new RangeError(`set must be an ISO date-time, got ${JSON.stringify(b.set)}`)
        ctx.clock.set(t)
      } else throw new RangeError('give advance ("90d", "15m", or milliseconds), offsetMs, or set (ISO date-time)')
    } catch (err) {
      throw new BankSimConfigError((err as Error).message)
    }
    ctx.payments.settleDue()
    return clockView()
  })

  app.get('/__admin/faults', async () => ({ faults: ctx.faults.config }))
  app.put('/__admin/faults', async (req) => {
    ctx.faults.set(validateFaults(req.body))
    return { faults: ctx.faults.config }
  })
  app.delete('/__admin/faults', async () => {
    ctx.faults.clear()
    return { faults: {} }
  })

  const limits = () => ({ authorizationPerHour: ctx.rateLimiter.limitPerHour, unattendedReadsPerDay: ctx.unattended.perDay ?? null })
  app.get('/__admin/rate-limit', async () => limits())
  app.put('/__admin/rate-limit', async (req) => {
    const b = obj(req.body)
    try {
      if (b.authorizationPerHour !== undefined) ctx.rateLimiter.setLimit(Number(b.authorizationPerHour))
      if (b.unattendedReadsPerDay !== undefined) ctx.unattended.set(b.unattendedReadsPerDay === null ? undefined : Number(b.unattendedReadsPerDay))
    } catch (err) {
      throw new BankSimConfigError((err as Error).message)
    }
    return limits()
  })

  app.post('/__admin/transactions', async (req, reply) => {
    const b = obj(req.body)
    const entries = injectTransactions(ctx.bank, { accountId: b.accountId, iban: b.iban }, b.transactions)
    return reply.code(201).send({
      transactions: entries.map((e) => ({
        entryReference: e.entryReference,
        accountId: e.accountId,
        at: new Date(e.at).toISOString(),
        ...(e.releasedAt !== undefined ? { releasedAt: new Date(e.releasedAt).toISOString() } : { bookAt: new Date(e.bookAt).toISOString() }),
      })),
    })
  })

  app.post('/__admin/authorizations', async (req) => {
    const b = obj(req.body)
    const decision = b.decision ?? 'authorize'
    if (decision !== 'authorize' && decision !== 'cancel') throw new BankSimConfigError('decision must be authorize or cancel')
    if (typeof b.paymentId === 'string') {
      const p = ctx.payments.byId(b.paymentId)
      if (!p) throw new BankSimConfigError(`payment ${b.paymentId} does not exist`)
      if (decision === 'authorize') ctx.payments.authorize(p)
      else ctx.payments.cancel(p)
      return { paymentId: p.id, ...ctx.payments.renderStatus(p) }
    }
    if (typeof b.standingOrderId === 'string') {
      const o = ctx.standingOrders.byId(b.standingOrderId)
      if (!o) throw new BankSimConfigError(`standing order ${b.standingOrderId} does not exist`)
      if (decision === 'authorize') ctx.standingOrders.authorize(o)
      else ctx.standingOrders.cancel(o)
      return { standingOrderId: o.id, instructionStatus: ctx.standingOrders.status(o) }
    }
    throw new BankSimConfigError('give paymentId or standingOrderId')
  })

  app.get('/__admin/stats', async () => ({
    ...ctx.stats.toJSON(),
    tokens: ctx.tokens.counters,
    authorizationRateLimit: { perHour: ctx.rateLimiter.limitPerHour, rejected: ctx.rateLimiter.rejected },
    unattendedAccessLimit: { perDay: ctx.unattended.perDay ?? null, rejected: ctx.unattended.rejected },
    faultsInjected: ctx.faults.injected,
    contractDrift: ctx.drift === undefined ? null : { seed: ctx.drift.seed, paymentsPath: ctx.drift.paymentsPath, drawn: ctx.drift.drawn() },
    clock: clockView(),
  }))

  app.post('/__admin/reset', async () => {
    reset()
    return { reset: true, clock: clockView() }
  })
}
