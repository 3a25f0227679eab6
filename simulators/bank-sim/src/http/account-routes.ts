import type { FastifyInstance } from 'fastify'
import { addDays, bankDate, bankInstant, isIsoDate } from '../core/bank-dates.ts'
import { intParam, paginate } from '../core/paging.ts'
import { BankApiError } from '../errors.ts'
import { effectiveDate, renderAccount, renderBalances, renderTransaction } from '../data/cobs-render.ts'
import type { SimAccount } from '../data/world.ts'
import type { Consent } from '../oauth/token-service.ts'
import type { SimContext } from '../sim-context.ts'
import { guard, headerOf } from './api-guard.ts'

/** History older than this many days needs a fresh token (spec). */
export const DAYS_WITHOUT_SCA = 90

function consentedAccount(ctx: SimContext, consent: Consent, id: string): SimAccount {
  const account = ctx.bank.account(id)
  if (!account || account.userId !== consent.userId || !consent.accountIds.includes(id)) {
    throw new BankApiError(404, { error: 'ID_NOT_FOUND', scope: 'id', message: `account ${id} does not exist or is not part of the consent` })
  }
  return account
}

function lastValue(v: unknown): unknown {
  return Array.isArray(v) ? v[v.length - 1] : v
}

/** Accounts interface (AISP): accounts, balances, transactions. */
export function registerAccountRoutes(app: FastifyInstance, ctx: SimContext): void {
  app.get('/accounts', async (req) => {
    const { consent } = guard(ctx, req, ['AISP'])
    const q = req.query as Record<string, unknown>
    const accounts = consent.accountIds.map((id) => ctx.bank.account(id)).filter((a): a is SimAccount => a !== undefined)
    const size = intParam(q.size, 'size', 1, 100) ?? Math.max(1, accounts.length)
    const page = intParam(q.page, 'page', 0, 1_000_000) ?? 0
    const { items, ...paging } = paginate(accounts, page, size)
    return { ...paging, accounts: items.map(renderAccount) }
  })

  app.get('/accounts/:id/balance', async (req) => {
    const { consent } = guard(ctx, req, ['AISP'])
    const account = consentedAccount(ctx, consent, (req.params as { id: string }).id)
    if (headerOf(req, 'user-involved') !== 'true') ctx.unattended.take(consent.id, account.id)
    const currency = lastValue((req.query as Record<string, unknown>).currency)
    if (currency !== undefined && currency !== account.currency) {
      throw new BankApiError(400, { error: 'AC09', scope: 'currency', parameters: { CURRENCY_ALLOWED: account.currency }, message: `account ${account.id} holds ${account.currency} only` })
    }
    const now = ctx.clock.now()
    return renderBalances(account, ctx.bank.ledger.balances(account, now), now, bankInstant(bankDate(now), 0))
  })

  app.get('/accounts/:id/transactions', async (req) => {
    const who = guard(ctx, req, ['AISP'])
    const account = consentedAccount(ctx, who.consent, (req.params as { id: string }).id)
    const q = req.query as Record<string, unknown>
    const pageSize = intParam(q.pageSize, 'pageSize', 10, 100) ?? 100
    const page = intParam(q.page, 'page', 0, 1_000_000) ?? 0
    if (page === 0 && headerOf(req, 'user-involved') !== 'true') ctx.unattended.take(who.consent.id, account.id)
    const now = ctx.clock.now()
    const today = bankDate(now)
    const oldestWithoutSca = addDays(today, -DAYS_WITHOUT_SCA)
    const rawFrom = lastValue(q.dateFrom)
    let dateFrom = oldestWithoutSca
    if (rawFrom !== undefined) {
      if (typeof rawFrom !== 'string' || !isIsoDate(rawFrom)) throw new BankApiError(400, { error: 'DT01', scope: 'dateFrom', message: `dateFrom must be an ISO date YYYY-MM-DD, got ${JSON.stringify(rawFrom)}` })
      dateFrom = rawFrom
    }
    if (dateFrom < oldestWithoutSca && !who.fresh) {
      throw new BankApiError(
        401,
        {
          error: 'UNAUTHORISED',
          scope: 'dateFrom',
          parameters: { REASON: 'SCA_REQUIRED', MAX_DAYS: String(DAYS_WITHOUT_SCA), OLDEST_DATE_WITHOUT_SCA: oldestWithoutSca },
          message: `history older than ${DAYS_WITHOUT_SCA} days (before ${oldestWithoutSca}) needs a fresh token from a new consent flow`,
        },
        { 'www-authenticate': 'Bearer error="insufficient_user_authentication", error_description="fresh strong customer authentication required"' },
      )
    }
    const entries = ctx.bank.ledger
      .entries(account, now, dateFrom)
      .map((e) => ({ e, date: effectiveDate(e, now), t: e.bookAt <= now ? e.bookAt : e.at }))
      .filter((x) => x.date >= dateFrom)
      .sort((a, b) => (a.date === b.date ? b.t - a.t || (a.e.entryReference < b.e.entryReference ? 1 : -1) : a.date < b.date ? 1 : -1))
    const { items, ...paging } = paginate(entries, page, pageSize)
    return { ...paging, transactions: items.map((x) => renderTransaction(x.e, account, now)) }
  })
}
