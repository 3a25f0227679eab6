import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BankInvalidArgumentError,
  BankNotFoundError,
  BankRequestRejectedError,
  bankToday,
  type Transaction,
} from '@tep/bank-client'
import { startHarness, type Harness, type SimAccount } from './support/sim-harness.ts'

let h: Harness
let call: { accessToken: string }
let accounts: SimAccount[]
/** Transaction-page requests seen by the counting client. */
let pageRequests = 0
let counting: ReturnType<Harness['client']>

beforeAll(async () => {
  h = await startHarness()
  accounts = await h.accountsOf('user1')
  const tokens = await h.consent('user1', 'AISP')
  call = { accessToken: tokens.accessToken }
  counting = h.client({
    hooks: {
      onRequest: (info) => {
        if (info.operation === 'bank.accounts.getTransactions') pageRequests++
      },
    },
  })
})
afterAll(() => h.close())

const today = () => bankToday(h.now())
const byKind = (currency: string, kind = 'CURRENT') =>
  accounts.find((a) => a.currency === currency && a.kind === kind)!

async function collect(
  accountId: string,
  query: { dateFrom?: string; pageSize?: number },
): Promise<{ items: Transaction[]; requests: number }> {
  pageRequests = 0
  const items: Transaction[] = []
  for await (const tx of counting.accounts.transactions(accountId, query, call)) items.push(tx)
  return { items, requests: pageRequests }
}

/** Injects transfers dated now so that today's history of the account holds exactly `total` entries. */
async function makeTodayCount(account: SimAccount, total: number): Promise<void> {
  const first = await h.bank.accounts.getTransactionsPage(
    account.id,
    { dateFrom: today(), pageSize: 10 },
    call,
  )
  const have = first.totalCount ?? 0
  if (have > total)
    throw new Error(`account ${account.id} already has ${have} transactions today, more than ${total}`)
  if (have < total) {
    await h.admin('POST', '/__admin/transactions', {
      accountId: account.id,
      transactions: [{ type: 'TRANSFER', amount: 12.5, creditDebitIndicator: 'CRDT', copies: total - have }],
    })
  }
}

describe('accounts interface', () => {
  it('lists the consented current and credit-card accounts', async () => {
    const listed = await h.bank.accounts.listAccounts(call)
    expect(listed.map((a) => a.id).sort()).toEqual(accounts.map((a) => a.id).sort())
    expect(new Set(listed.map((a) => a.cashAccountType))).toEqual(new Set(['CACC', 'CARD']))
    const page = await h.bank.accounts.getAccountsPage({ page: 0, size: 2 }, call)
    expect(page.items).toHaveLength(2)
    expect(page.nextPage).toBe(1)
  })

  it('reads balances, and refuses a currency the account does not hold', async () => {
    const czk = byKind('CZK')
    const balance = await h.bank.accounts.getBalance(czk.id, { currency: 'CZK' }, call)
    expect(balance.balances.map((b) => b.type.codeOrProprietary.code).sort()).toEqual([
      'CLAV',
      'CLBD',
      'PRCD',
    ])
    expect(balance.balances.every((b) => b.amount.currency === 'CZK')).toBe(true)
    const err = await h.bank.accounts.getBalance(czk.id, { currency: 'EUR' }, call).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BankRequestRejectedError)
    expect((err as BankRequestRejectedError).bankCodes).toEqual(['AC09'])
    await expect(h.bank.accounts.getBalance('no-such-account', {}, call)).rejects.toBeInstanceOf(
      BankNotFoundError,
    )
  })

  it('pages the whole default history once, newest first, with unique entry references', async () => {
    const account = byKind('CZK')
    const first = await h.bank.accounts.getTransactionsPage(account.id, { pageSize: 100 }, call)
    const { items, requests } = await collect(account.id, { pageSize: 100 })
    expect(items).toHaveLength(first.totalCount!)
    expect(requests).toBe(first.pageCount)
    expect(new Set(items.map((t) => t.entryReference)).size).toBe(items.length)
    const dates = items.map((t) => t.bookingDate!.date!)
    expect([...dates].sort().reverse()).toEqual(dates)
  })

  it('ends exactly on an exact multiple of the page size (no extra request)', async () => {
    const account = byKind('EUR')
    await makeTodayCount(account, 30)
    const { items, requests } = await collect(account.id, { dateFrom: today(), pageSize: 10 })
    expect(items).toHaveLength(30)
    expect(requests).toBe(3)
    expect(new Set(items.map((t) => t.entryReference)).size).toBe(30)
  })

  it('reads a single full page when the total equals the page size, and a short last page otherwise', async () => {
    const account = byKind('USD')
    await makeTodayCount(account, 10)
    expect(await collect(account.id, { dateFrom: today(), pageSize: 10 })).toMatchObject({ requests: 1 })
    await makeTodayCount(account, 11)
    const { items, requests } = await collect(account.id, { dateFrom: today(), pageSize: 10 })
    expect(items).toHaveLength(11)
    expect(requests).toBe(2)
  })

  it('handles an empty history: one request, no items', async () => {
    const tomorrow = new Date(`${today()}T00:00:00Z`)
    tomorrow.setUTCDate(tomorrow.getUTCDate() + 1)
    const page = await h.bank.accounts.getTransactionsPage(
      byKind('CZK').id,
      { dateFrom: tomorrow.toISOString().slice(0, 10), pageSize: 10 },
      call,
    )
    expect(page).toMatchObject({ pageCount: 0, totalCount: 0, items: [] })
    expect(
      await collect(byKind('CZK').id, { dateFrom: tomorrow.toISOString().slice(0, 10), pageSize: 10 }),
    ).toEqual({ items: [], requests: 1 })
  })

  it('checks the page size before sending anything', async () => {
    pageRequests = 0
    await expect(
      counting.accounts.getTransactionsPage(byKind('CZK').id, { pageSize: 101 }, call),
    ).rejects.toBeInstanceOf(BankInvalidArgumentError)
    expect(() => counting.accounts.transactions(byKind('CZK').id, { pageSize: 5 }, call)).toThrow(
      /from 10 to 100/,
    )
    expect(pageRequests).toBe(0)
  })

  it('lists standing orders by currency with pagination, and reads one', async () => {
    const all: string[] = []
    for await (const so of h.bank.accounts.standingOrders({ currency: 'CZK', size: 1 }, call)) {
      all.push(so.standingOrderIdentification!.transactionIdentification!)
      expect(so.debtorAccount?.currency).toBe('CZK')
    }
    const onePage = await h.bank.accounts.listStandingOrders({ currency: 'CZK' }, call)
    expect(all).toEqual(onePage.items.map((s) => s.standingOrderIdentification!.transactionIdentification!))
    expect(all.length).toBeGreaterThan(0)
    const detail = await h.bank.accounts.getStandingOrder(all[0]!, call)
    expect(detail.standingOrderIdentification?.transactionIdentification).toBe(all[0])
    const usd = await h.bank.accounts.listStandingOrders({ currency: 'USD' }, call)
    expect(usd.items.every((s) => s.debtorAccount?.currency === 'USD')).toBe(true)
  })
})
