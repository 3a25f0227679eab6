import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBankSim, type BankSim } from '@tep/bank-sim'
import { OpenApiContract } from './openapi-contract.ts'
import { BankSimHarness, type Tokens } from './bank-sim-harness.ts'

// A frozen wall clock: only the admin clock moves time, so every run sees the same days.
const START = Date.parse('2026-06-15T10:00:00Z')
const contract = new OpenApiContract()

interface Tx {
  entryReference: string
  status: 'BOOK' | 'PDNG'
  bookingDate: { date: string }
  amount: { value: number; currency: string }
  creditDebitIndicator: string
  entryDetails: { transactionDetails: { additionalTransactionInformation?: string; amountDetails?: unknown; relatedParties?: { creditor?: { name?: string } } } }
}

let sim: BankSim
let h: BankSimHarness
let account: { id: string; iban: string }

beforeAll(async () => {
  sim = await startBankSim({ seed: 'clock', clients: 2, wallClock: () => START })
  h = new BankSimHarness(sim, contract)
  account = (await h.users())[0]?.accounts.find((a) => a.kind === 'CURRENT' && a.currency === 'CZK') as typeof account
})

afterAll(async () => {
  await sim.close()
})

async function history(t: Tokens, dateFrom: string): Promise<Tx[]> {
  const out: Tx[] = []
  for (let page = 0; ; page++) {
    const answer = await h.api<{ transactions: Tx[]; nextPage?: number }>('GET', '/accounts/{id}/transactions', `/accounts/${account.id}/transactions?pageSize=100&page=${page}&dateFrom=${dateFrom}`, t.access_token)
    expect(answer.status).toBe(200)
    out.push(...answer.body.transactions)
    if (answer.body.nextPage === undefined) return out
  }
}

async function freshAisp(): Promise<Tokens> {
  return h.consent('AISP')
}

describe('history follows the simulator clock', () => {
  it('is the same for the same seed and time, shows new days as the clock advances, and books holds under the same entryReference', async () => {
    const t = await freshAisp()
    const before = await history(t, '2026-06-01')
    expect(before.every((x) => x.bookingDate.date <= '2026-06-15')).toBe(true)
    const pending = before.filter((x) => x.status === 'PDNG')
    expect(pending.length).toBeGreaterThan(0)
    expect(pending.every((x) => x.entryDetails.transactionDetails.additionalTransactionInformation?.startsWith('Platba kartou; '))).toBe(true)

    const twin = await startBankSim({ seed: 'clock', clients: 2, wallClock: () => START })
    try {
      const other = new BankSimHarness(twin)
      const t2 = await other.consent('AISP')
      const again = await other.api<{ transactions: Tx[] }>('GET', '/accounts/{id}/transactions', `/accounts/${account.id}/transactions?pageSize=100&dateFrom=2026-06-01`, t2.access_token)
      expect(again.body.transactions).toEqual(before.slice(0, 100))
    } finally {
      await twin.close()
    }

    await h.advance('5d')
    const t3 = await freshAisp()
    const after = await history(t3, '2026-06-01')
    const byRef = new Map(after.map((x) => [x.entryReference, x]))
    for (const p of pending) {
      const booked = byRef.get(p.entryReference) as Tx
      expect(booked.status).toBe('BOOK')
      expect(booked.amount.currency).toBe(p.amount.currency)
      // A foreign-currency hold books at the clearing rate, within about 1 % of the hold.
      if (p.entryDetails.transactionDetails.amountDetails) expect(Math.abs(booked.amount.value - p.amount.value)).toBeLessThanOrEqual(Math.ceil(p.amount.value * 0.01 * 100) / 100 + 0.01)
      else expect(booked.amount).toEqual(p.amount)
    }
    const newDays = after.filter((x) => x.bookingDate.date > '2026-06-15')
    expect(newDays.length).toBeGreaterThan(0)
    expect(new Set(after.map((x) => x.entryReference)).size).toBe(after.length)
  })

  it('keeps identical twins apart by entryReference, books an injected hold later with the same reference, and drops a released hold', async () => {
    const t = await freshAisp()
    const now = (await h.admin<{ now: string }>('GET', '/clock')).body.now
    const injected = await h.admin<{ transactions: Array<{ entryReference: string }> }>('POST', '/transactions', {
      accountId: account.id,
      transactions: [
        { type: 'CARD', amount: 99.9, shopIndex: 42, copies: 2 },
        { type: 'CARD', amount: 1234.56, shopIndex: 7, pendingUntil: new Date(Date.parse(now) + 2 * 86_400_000).toISOString() },
        { type: 'CARD', amount: 777, shopIndex: 9, releaseAt: new Date(Date.parse(now) + 86_400_000).toISOString() },
      ],
    })
    expect(injected.status).toBe(201)
    const [a, b, hold, released] = injected.body.transactions.map((x) => x.entryReference) as [string, string, string, string]
    expect(a).not.toBe(b)
    const balance = async (tokens: Tokens) => {
      const answer = await h.api<{ balances: Array<{ type: { codeOrProprietary: { code: string } }; amount: { value: number }; creditDebitIndicator: string }> }>('GET', '/accounts/{id}/balance', `/accounts/${account.id}/balance`, tokens.access_token)
      const value = (code: string) => {
        const bal = answer.body.balances.find((x) => x.type.codeOrProprietary.code === code)
        return bal ? (bal.creditDebitIndicator === 'DBIT' ? -1 : 1) * bal.amount.value : NaN
      }
      return { booked: value('CLBD'), available: value('CLAV') }
    }
    const today = now.slice(0, 10)
    const list = await history(t, today)
    const twins = list.filter((x) => x.entryReference === a || x.entryReference === b)
    expect(twins).toHaveLength(2)
    // Identical in everything but the bank's references (entryReference, and accountServicerReference that mirrors it).
    const strip = (x: Tx) => JSON.parse(JSON.stringify(x).replaceAll(x.entryReference, 'REF')) as Tx
    expect(strip(twins[0] as Tx)).toEqual(strip(twins[1] as Tx))
    expect(list.find((x) => x.entryReference === hold)?.status).toBe('PDNG')
    expect(list.find((x) => x.entryReference === released)?.status).toBe('PDNG')
    const during = await balance(t)
    expect(Math.round((during.booked - during.available) * 100)).toBeGreaterThanOrEqual(123_456 + 77_700)

    await h.advance('2d')
    const t2 = await freshAisp()
    const after = await history(t2, today)
    expect(after.find((x) => x.entryReference === hold)?.status).toBe('BOOK')
    // The released hold is gone, from the history and from the balance.
    expect(after.find((x) => x.entryReference === released)).toBeUndefined()
    const settled = await balance(t2)
    expect(Math.round((settled.booked - during.booked) * 100)).toBeLessThanOrEqual(-123_456)
  })

  it('ends an accounts consent after 90 days but keeps cards and payments consents', async () => {
    const aisp = await freshAisp()
    const cisp = await h.consent('CISP')
    const pisp = await h.consent('PISP')
    await h.advance('89d')
    const late = await h.refresh(aisp.refresh_token)
    expect(late.status).toBe(200)
    await h.advance('1d')
    const expired = await h.api('GET', '/accounts', '/accounts', (late.body as Tokens).access_token)
    expect(expired.status).toBe(401)
    expect((expired.body as { errors: Array<{ parameters: Record<string, string> }> }).errors[0]?.parameters).toEqual({ REASON: 'CONSENT_EXPIRED' })
    expect((await h.refresh((late.body as Tokens).refresh_token)).body).toMatchObject({ error: 'invalid_grant' })
    for (const t of [cisp, pisp]) expect((await h.refresh(t.refresh_token)).status).toBe(200)
  })
})
