import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { intParam, paginate } from '../core/paging.ts'
import { isValidAmount, toMinor } from '../core/money.ts'
import { BankApiError } from '../errors.ts'
import { BodyReader } from './body-reader.ts'
import type { Consent } from '../oauth/token-service.ts'
import { sameOriginAsRegistered, type RegisteredClient } from '../oauth/registered-client.ts'
import type { SignTarget } from '../payments/signing.ts'
import type { SimContext } from '../sim-context.ts'
import { guard, headerOf } from './api-guard.ts'

function baseUrl(req: FastifyRequest): string {
  return `${req.protocol}://${req.headers.host ?? `${req.hostname}`}`
}

/** Validates the sign request (return URL header, optional body) and opens the authorization page. */
function startSigning(ctx: SimContext, req: FastifyRequest, consent: Consent, target: SignTarget, signId: string): Record<string, unknown> {
  const returnUrl = headerOf(req, 'tpp-redirect-uri')
  if (returnUrl === undefined || returnUrl === '') throw new BankApiError(400, { error: 'FIELD_MISSING', scope: 'TPP-Redirect-URI', message: 'header TPP-Redirect-URI (the URL the user returns to) is required' })
  const client = ctx.clients.get(consent.clientId) as RegisteredClient
  if (!sameOriginAsRegistered(client, returnUrl)) {
    throw new BankApiError(400, { error: 'FIELD_INVALID', scope: 'TPP-Redirect-URI', message: 'TPP-Redirect-URI must be an http(s) URL on the origin of a registered redirect URI' })
  }
  if (req.body !== undefined && req.body !== null && req.body !== '') {
    const r = new BodyReader(req.body)
    r.enumOf('authorizationType', ['USERAGENT_REDIRECT'] as const)
    if (r.errors.length > 0) throw new BankApiError(400, r.errors)
  }
  const session = ctx.signing.open(target, signId, consent.userId, returnUrl)
  return {
    authorizationType: 'USERAGENT_REDIRECT',
    href: { url: `${baseUrl(req)}/sign/${session.id}`, id: session.id },
    method: 'GET',
  }
}

function balanceCheck(ctx: SimContext, consent: Consent, body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BankApiError(400, { error: 'FF01', message: 'request body must be a JSON object' })
  const r = new BodyReader(body)
  const exchange = r.raw('exchangeIdentification')
  if (exchange === undefined) r.errors.push({ error: 'FIELD_MISSING', scope: 'exchangeIdentification', message: 'exchangeIdentification is required' })
  else if (!((typeof exchange === 'string' && exchange !== '' && exchange.length <= 18) || (typeof exchange === 'number' && Number.isInteger(exchange) && String(exchange).length <= 18))) {
    r.errors.push({ error: 'FIELD_INVALID', scope: 'exchangeIdentification', message: 'exchangeIdentification must be a string or integer of at most 18 characters' })
  }
  const iban = r.string('debtorAccount.identification.iban', { required: true })
  const debtorCurrency = r.string('debtorAccount.currency', { pattern: /^[A-Z]{3}$/, patternHint: 'an ISO 4217 code' })
  const currency = r.string('transactionDetails.currency', { required: true, pattern: /^[A-Z]{3}$/, patternHint: 'an ISO 4217 code' })
  const total = r.raw('transactionDetails.totalAmount')
  if (total === undefined) r.errors.push({ error: 'FIELD_MISSING', scope: 'transactionDetails.totalAmount', message: 'transactionDetails.totalAmount is required' })
  else if (!isValidAmount(total)) r.errors.push({ error: 'AM12', scope: 'transactionDetails.totalAmount', message: 'totalAmount must be positive with at most 2 decimals' })
  if (r.errors.length > 0 || iban === undefined || currency === undefined) throw new BankApiError(400, r.errors)
  const account = ctx.bank.accountByIban(iban)
  if (!account) throw new BankApiError(400, { error: 'AC02', scope: 'debtorAccount.identification.iban', message: `account ${iban} is not an account of this bank` })
  if (account.userId !== consent.userId || !consent.accountIds.includes(account.id)) {
    throw new BankApiError(403, { error: 'AG01', scope: 'debtorAccount.identification.iban', message: 'the account is not part of the consent given to this application' })
  }
  if (debtorCurrency !== undefined && debtorCurrency !== account.currency) {
    throw new BankApiError(400, { error: 'AC10', scope: 'debtorAccount.currency', parameters: { CURRENCY_ALLOWED: account.currency }, message: `the account holds ${account.currency}` })
  }
  if (currency !== account.currency) {
    throw new BankApiError(400, { error: 'AM11', scope: 'transactionDetails.currency', parameters: { CURRENCY_ALLOWED: account.currency }, message: `the account holds ${account.currency}; no conversion` })
  }
  const available = ctx.bank.ledger.balances(account, ctx.clock.now()).availableMinor
  return { responseIdentification: randomBytes(8).toString('hex'), exchangeIdentification: exchange, response: available >= toMinor(total as number) ? 'APPR' : 'DECL' }
}

/** Payments interface (PISP), the cards balance check (CISP) and standing orders (AISP reads, PISP writes). */
export function registerPaymentRoutes(app: FastifyInstance, ctx: SimContext): void {
  app.post('/accounts/balanceCheck', async (req) => balanceCheck(ctx, guard(ctx, req, ['CISP']).consent, req.body))
  app.post('/payments/balanceCheck', async (req) => balanceCheck(ctx, guard(ctx, req, ['PISP']).consent, req.body))

  // The description's endpoint table writes `POST /payments/`; `POST /payments` is 404 (no such operation),
  // unless the contract-drift mode drew the versioning table's spelling.
  app.post(ctx.drift?.paymentsPath ?? '/payments/', async (req, reply) => {
    const { consent } = guard(ctx, req, ['PISP'])
    const payment = ctx.payments.create(consent, req.body)
    return reply.code(201).send(ctx.payments.render(payment))
  })

  app.get('/payments/:paymentId', async (req) => {
    const { consent } = guard(ctx, req, ['PISP'])
    const p = ctx.payments.find(consent, (req.params as { paymentId: string }).paymentId)
    if (p.signState !== 'OPEN') {
      throw new BankApiError(404, { error: 'TRANSACTION_MISSING', scope: 'paymentId', parameters: { REASON: 'AUTHORIZATION_COMPLETED' }, message: 'payment details are available only until the authorization completes; read the status instead' })
    }
    return ctx.payments.render(p)
  })

  app.get('/payments/:paymentId/status', async (req) => {
    const { consent } = guard(ctx, req, ['PISP'])
    return ctx.payments.renderStatus(ctx.payments.find(consent, (req.params as { paymentId: string }).paymentId))
  })

  app.post('/payments/:paymentId/sign/:signId', async (req) => {
    const { consent } = guard(ctx, req, ['PISP'])
    const { paymentId, signId } = req.params as { paymentId: string; signId: string }
    const p = ctx.payments.find(consent, paymentId)
    if (signId !== p.signId) throw new BankApiError(400, { error: 'INCORRECT_SIGNID', scope: 'signId', message: `signId ${signId} is not the open authorization of payment ${paymentId}` })
    if (p.signState !== 'OPEN') throw new BankApiError(400, { error: 'AUTHORIZATION_COMPLETED', scope: 'signId', parameters: { STATE: p.signState }, message: `payment ${paymentId} is already ${p.signState === 'DONE' ? 'authorized' : 'cancelled'}` })
    return { ...startSigning(ctx, req, consent, { type: 'payment', id: p.id }, p.signId), signInfo: { state: p.signState, signId: p.signId, signID: p.signId } }
  })

  app.get('/standingorders', async (req) => {
    const { consent } = guard(ctx, req, ['AISP'])
    const q = req.query as Record<string, unknown>
    const rawCurrency = Array.isArray(q.currency) ? q.currency[q.currency.length - 1] : q.currency
    if (rawCurrency !== undefined && (typeof rawCurrency !== 'string' || !/^[A-Z]{3}$/.test(rawCurrency))) {
      throw new BankApiError(400, { error: 'PARAMETER_INVALID', scope: 'currency', message: `currency must be an ISO 4217 code, got ${JSON.stringify(rawCurrency)}` })
    }
    const list = ctx.standingOrders.listActive(consent, (rawCurrency as string | undefined) ?? 'CZK')
    const size = intParam(q.size, 'size', 1, 100) ?? Math.max(1, list.length)
    const page = intParam(q.page, 'page', 0, 1_000_000) ?? 0
    const { items, ...paging } = paginate(list, page, size)
    return { ...paging, standingOrders: items.map((o) => ctx.standingOrders.renderSummary(o)) }
  })

  app.post('/standingorders', async (req, reply) => {
    const { consent } = guard(ctx, req, ['PISP'])
    return reply.code(201).send(ctx.standingOrders.renderDetail(ctx.standingOrders.create(consent, req.body)))
  })

  app.get('/standingorders/:standingOrderId', async (req) => {
    const { consent } = guard(ctx, req, ['AISP', 'PISP'])
    return ctx.standingOrders.renderDetail(ctx.standingOrders.find(consent, (req.params as { standingOrderId: string }).standingOrderId))
  })

  app.put('/standingorders/:standingOrderId', async (req) => {
    const { consent } = guard(ctx, req, ['PISP'])
    return ctx.standingOrders.renderDetail(ctx.standingOrders.update(consent, (req.params as { standingOrderId: string }).standingOrderId, req.body))
  })

  app.delete('/standingorders/:standingOrderId', async (req) => {
    const { consent } = guard(ctx, req, ['PISP'])
    return ctx.standingOrders.renderDetail(ctx.standingOrders.delete(consent, (req.params as { standingOrderId: string }).standingOrderId))
  })

  app.post('/standingorders/:standingOrderId/sign/:signId', async (req) => {
    const { consent } = guard(ctx, req, ['PISP'])
    const { standingOrderId, signId } = req.params as { standingOrderId: string; signId: string }
    const order = ctx.standingOrders.find(consent, standingOrderId)
    const s = order.signing
    if (!s || signId !== s.signId) throw new BankApiError(400, { error: 'INCORRECT_SIGNID', scope: 'signId', message: `signId ${signId} is not the open authorization of standing order ${standingOrderId}` })
    if (s.state !== 'OPEN') throw new BankApiError(400, { error: 'AUTHORIZATION_COMPLETED', scope: 'signId', parameters: { STATE: s.state }, message: `this authorization of standing order ${standingOrderId} is already ${s.state === 'DONE' ? 'done' : 'cancelled'}` })
    return { ...startSigning(ctx, req, consent, { type: 'standingOrder', id: order.id }, s.signId), signInfo: { state: s.state, signId: s.signId, signID: s.signId } }
  })

  app.get('/standingorders/:standingOrderId/status', async (req) => {
    const { consent } = guard(ctx, req, ['PISP'])
    const order = ctx.standingOrders.find(consent, (req.params as { standingOrderId: string }).standingOrderId, { includeDeleted: true })
    return { instructionStatus: ctx.standingOrders.status(order), realizedPayments: ctx.standingOrders.realized(order) }
  })
}
