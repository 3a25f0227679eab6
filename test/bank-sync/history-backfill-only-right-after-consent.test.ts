import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bankToday, createBankClient, type BankClient } from '@tep/bank-client'
import { startHarness, type Harness, type Instance } from './support/bank-sync-harness.ts'

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
}

describe('history older than 90 days', () => {
  let h: Harness
  let instance: Instance
  let bank: BankClient
  /** Every dateFrom bank-sync asked for, in order. */
  const dateFroms: string[] = []

  beforeAll(async () => {
    h = await startHarness()
    bank = createBankClient({
      baseUrl: h.sim.url,
      clientId: 'tep-sim-client',
      clientSecret: 'tep-sim-secret',
      redirectUri: h.redirectUri,
      tppName: 'bank-sync test',
      now: () => new Date(h.sim.clock.now()),
    })
    const accounts = bank.accounts
    const spy: BankClient = {
      ...bank,
      accounts: new Proxy(accounts, {
        get(target, property) {
          if (property === 'transactionPages') {
            return (id: string, query: { dateFrom?: string }, call: unknown) => {
              dateFroms.push(query.dateFrom ?? '(none)')
              return target.transactionPages(id, query, call as Parameters<typeof target.transactionPages>[2])
            }
          }
          const value: unknown = Reflect.get(target, property)
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
        },
      }),
    }
    instance = await h.startInstance({ sync: { backfillDays: 110 }, bankClient: spy })
  })
  afterAll(async () => {
    await h?.close()
    await bank?.close()
  })

  it('is read once, right after consent while the token is fresh; later syncs stay within the overlap window', async () => {
    const account = (await h.accountsOf('user2')).find((a) => a.currency === 'CZK')
    if (!account) throw new Error('user2 has no CZK account in the simulator')
    const { consentId } = await h.grantThroughGateway(
      instance.sync.gatewayUrl as string,
      'customer-b',
      'user2',
      [account.id],
    )
    await h.waitForSync(instance, consentId, 0, 'synced')

    const today = bankToday(new Date(h.sim.clock.now()))
    const history = await h.bankHistory('user2', account.id, addDays(today, -110))
    const older = history.filter((t) => (t.bookingDate?.date ?? '') < addDays(today, -90))
    expect(older.length).toBeGreaterThan(0)
    const raw = await h.readUntil(
      h.topics.raw,
      h.codecs.raw,
      'the backfilled raw events',
      (r) => r.length >= history.length,
    )
    expect(new Set(raw.map((r) => r.value.sourceReference))).toEqual(
      new Set(history.map((t) => `${consentId}/${account.id}/${t.entryReference}`)),
    )

    expect(dateFroms[0]).toBe(addDays(today, -110))

    // Later syncs ask only for the overlap window; nothing is republished.
    const mark = instance.syncs.length
    await h.waitForSync(instance, consentId, mark, 'synced')
    await h.waitForSync(instance, consentId, instance.syncs.length, 'synced')
    expect(await h.readAll(h.topics.raw, h.codecs.raw)).toHaveLength(raw.length)
    expect(dateFroms.length).toBeGreaterThanOrEqual(3)
    for (const later of dateFroms.slice(1)) expect(later).toBe(addDays(today, -3))
    const watermark = instance.sync.ownedConsent(consentId)?.accounts[0]?.lastBookingDate
    expect(watermark).toBe(today)
  })
})
