import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bankToday } from '@tep/bank-client'
import { startHarness, type Harness, type Instance } from './support/bank-sync-harness.ts'

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
}

describe('later syncs', () => {
  let h: Harness
  let instance: Instance

  beforeAll(async () => {
    h = await startHarness()
    instance = await h.startInstance()
  })
  afterAll(async () => {
    await h?.close()
  })

  /** Waits for two more finished syncs: the second one certainly started after the caller's change. */
  async function syncedTwiceMore(consentId: string): Promise<void> {
    const before = instance.syncs.length
    await h.waitForSync(instance, consentId, before, 'synced')
    const after = instance.syncs.length
    await h.waitForSync(instance, consentId, after, 'synced')
  }

  it('emit only new and changed entries: pending to booked is one MODIFIED and no second raw event; twins stay two', async () => {
    const account = (await h.accountsOf('user1')).find(
      (a) => a.currency === 'CZK' && a.kind !== 'CREDIT_CARD',
    )
    if (!account) throw new Error('user1 has no CZK current account in the simulator')
    const { consentId, callback } = await h.grantThroughGateway(
      instance.sync.gatewayUrl as string,
      'customer-7',
      'user1',
      [account.id],
    )
    expect(callback.status).toBe(201)
    await h.waitForSync(instance, consentId, 0, 'synced')
    const dateFrom = addDays(bankToday(new Date(h.sim.clock.now())), -30)
    const firstSnapshot = await h.bankHistory('user1', account.id, dateFrom)
    const pendingAtFirstSync = new Set(
      firstSnapshot.filter((t) => t.status === 'PDNG').map((t) => t.entryReference),
    )
    expect(pendingAtFirstSync.size).toBeGreaterThan(0)
    const firstConsent = instance.sync.ownedConsent(consentId)

    // Quiet syncs (the bank's clock stands still) publish nothing more.
    await syncedTwiceMore(consentId)
    expect(await h.readAll(h.topics.raw, h.codecs.raw)).toHaveLength(firstSnapshot.length)

    // A card hold that books in two days, and two genuinely identical transfers.
    const now = h.sim.clock.now()
    const injected = await h.admin<{ entries?: Array<{ entryReference: string }> } & Record<string, unknown>>(
      'POST',
      '/__admin/transactions',
      {
        accountId: account.id,
        transactions: [
          {
            type: 'CARD',
            amount: 249.9,
            shopIndex: 3,
            entryReference: 'HOLD-1',
            pendingUntil: new Date(now + 2 * 86_400_000).toISOString(),
          },
          {
            type: 'TRANSFER',
            amount: 1500,
            counterparty: { name: 'Twin Landlord', number: '2000145399', prefix: '19', bankCode: '0800' },
            remittance: { vs: '555', message: 'rent' },
            copies: 2,
          },
        ],
      },
    )
    expect(injected).toBeDefined()
    await syncedTwiceMore(consentId)
    const afterInjection = await h.readUntil(
      h.topics.raw,
      h.codecs.raw,
      'the injected entries',
      (r) => r.length >= firstSnapshot.length + 3,
    )
    expect(afterInjection).toHaveLength(firstSnapshot.length + 3)

    // Three days later: the hold and the generated holds book, new days of history appear,
    // the access token has expired (refreshed and rotated on the way).
    await h.advanceClock('3d')
    await syncedTwiceMore(consentId)

    const finalSnapshot = await h.bankHistory('user1', account.id, dateFrom)
    const bookedNow = new Set(finalSnapshot.filter((t) => t.status === 'BOOK').map((t) => t.entryReference))
    const expectedModified = [...pendingAtFirstSync, 'HOLD-1'].filter((ref) => bookedNow.has(ref)).sort()
    const raw = await h.readUntil(
      h.topics.raw,
      h.codecs.raw,
      'a raw event per entry',
      (r) => r.length >= finalSnapshot.length,
    )
    const bankTx = await h.readUntil(
      h.topics.bankTransactions,
      h.codecs.bankTransaction,
      'an ADDED per entry and the MODIFIED bookings',
      (r) => r.length >= finalSnapshot.length + expectedModified.length,
    )

    // Every entry the bank shows, exactly once on the raw topic; nothing else.
    const rawRefs = raw.map((r) => r.value.sourceReference)
    expect(new Set(rawRefs).size).toBe(rawRefs.length)
    expect(new Set(rawRefs)).toEqual(
      new Set(finalSnapshot.map((t) => `${consentId}/${account.id}/${t.entryReference}`)),
    )

    // MODIFIED exactly for the entries that were pending and are booked now.
    const modified = bankTx.filter((b) => b.value.changeType === 'MODIFIED')
    expect(modified.map((m) => m.value.entryReference).sort()).toEqual(expectedModified)
    expect(modified.every((m) => m.value.status === 'BOOKED')).toBe(true)
    const added = bankTx.filter((b) => b.value.changeType === 'ADDED')
    expect(added).toHaveLength(finalSnapshot.length)

    const hold = bankTx.filter((b) => b.value.entryReference === 'HOLD-1')
    expect(hold.map((b) => [b.value.changeType, b.value.status])).toEqual([
      ['ADDED', 'PENDING'],
      ['MODIFIED', 'BOOKED'],
    ])
    expect(hold[0]?.value.transactionId).toBe(hold[1]?.value.transactionId)
    expect(raw.filter((r) => r.value.sourceReference?.endsWith('/HOLD-1'))).toHaveLength(1)

    const twins = raw.filter((r) => r.value.transfer?.counterpartyName === 'Twin Landlord')
    expect(twins).toHaveLength(2)
    expect(twins[0]?.key).not.toBe(twins[1]?.key)
    expect({ ...twins[0]?.value.transfer }).toEqual({ ...twins[1]?.value.transfer })
    expect(twins[0]?.value.transfer).toMatchObject({
      variableSymbol: '555',
      message: 'rent',
      counterpartyBankCode: '0800',
    })

    // The token was refreshed and the rotated pair persisted (sealed) on the consent.
    const latest = instance.sync.ownedConsent(consentId)
    expect(latest?.refreshToken).not.toBe(firstConsent?.refreshToken)
    expect(latest?.accounts[0]?.pendingEntryReferences).not.toContain('HOLD-1')
    const refreshes = await instance.sync.metrics.tokenRefreshes.get()
    expect(refreshes.values.find((v) => v.labels.outcome === 'ok')?.value ?? 0).toBeGreaterThanOrEqual(1)
  })
})
