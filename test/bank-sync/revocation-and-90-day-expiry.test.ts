import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait-for.ts'
import { SIM_START, startHarness, type Harness, type Instance } from './support/bank-sync-harness.ts'

async function counterValue(
  instance: Instance,
  name: 'revocations' | 'expiring' | 'expired',
): Promise<number> {
  const metric = await instance.sync.metrics[name].get()
  return metric.values.reduce((sum, v) => sum + v.value, 0)
}

async function gaugeFor(instance: Instance, status: string): Promise<number> {
  const text = await instance.sync.metricsRegistry.metrics()
  const line = text.split('\n').find((l) => l.startsWith(`bank_sync_consents{status="${status}"`))
  return line === undefined ? 0 : Number(line.split(' ').at(-1))
}

describe('consent lifecycle driven by the bank', () => {
  let h: Harness
  let instance: Instance
  let gatewayUrl: string

  beforeAll(async () => {
    h = await startHarness()
    instance = await h.startInstance({ sync: { backfillDays: 10, expiryWarningMs: 7 * 86_400_000 } })
    gatewayUrl = instance.sync.gatewayUrl as string
  })
  afterAll(async () => {
    await h?.close()
  })

  /** The customer's own token: the gateway shows and ends a consent only to its customer. */
  async function as(customerId: string): Promise<{ authorization: string }> {
    return { authorization: `Bearer ${await h.customerToken(customerId)}` }
  }

  async function consentState(
    consentId: string,
    customerId: string,
  ): Promise<{ status: string; statusReason: string | null; expiryNotifiedAt: string | null }> {
    const res = await fetch(`${gatewayUrl}/consents/${consentId}`, { headers: await as(customerId) })
    expect(res.status).toBe(200)
    return (await res.json()) as {
      status: string
      statusReason: string | null
      expiryNotifiedAt: string | null
    }
  }

  it('a consent the customer revokes at the bank becomes REVOKED (written), counted, and is no longer synced', async () => {
    const { consentId, bankConsentId } = await h.grantThroughGateway(gatewayUrl, 'customer-r', 'user2')
    await h.waitForSync(instance, consentId, 0, 'synced')
    const revocationsBefore = await counterValue(instance, 'revocations')

    await h.admin('POST', '/__admin/revoke', { consentId: bankConsentId })
    const outcome = await h.waitForSync(instance, consentId, instance.syncs.length, 'stopped')
    expect(outcome).toEqual({ kind: 'stopped', status: 'REVOKED' })
    expect(await counterValue(instance, 'revocations')).toBe(revocationsBefore + 1)

    const records = (
      await h.readUntil(h.topics.consents, h.codecs.consent, 'the REVOKED record', (r) =>
        r.some((c) => c.key === consentId && c.value.status === 'REVOKED'),
      )
    ).filter((c) => c.key === consentId)
    const last = records.at(-1)?.value
    expect(last).toMatchObject({ status: 'REVOKED', accessToken: null, refreshToken: null })
    expect(last?.statusReason).toEqual(expect.any(String))
    await expect.poll(async () => (await consentState(consentId, 'customer-r')).status).toBe('REVOKED')
    await expect.poll(() => gaugeFor(instance, 'REVOKED')).toBeGreaterThanOrEqual(1)

    // Syncing stopped: later rounds of the scheduler do not touch this consent.
    const syncsAfter = instance.syncs.length
    const other = await h.grantThroughGateway(gatewayUrl, 'customer-other', 'user3')
    await h.waitForSync(instance, other.consentId, syncsAfter, 'synced')
    await h.waitForSync(instance, other.consentId, instance.syncs.length, 'synced')
    expect(instance.syncs.slice(syncsAfter).filter((s) => s.consentId === consentId)).toEqual([])
    // (ended so that it does not take part in the expiry counts below)
    expect(
      (
        await fetch(`${gatewayUrl}/consents/${other.consentId}`, {
          method: 'DELETE',
          headers: await as('customer-other'),
        })
      ).status,
    ).toBe(200)

    // A customer's DELETE of a terminal consent changes nothing.
    const del = await fetch(`${gatewayUrl}/consents/${consentId}`, {
      method: 'DELETE',
      headers: await as('customer-r'),
    })
    expect(((await del.json()) as { status: string }).status).toBe('REVOKED')
  })

  it('an accounts consent is announced EXPIRING 7 days before its 90 days end, keeps syncing, then becomes EXPIRED', async () => {
    const { consentId } = await h.grantThroughGateway(gatewayUrl, 'customer-x', 'user1')
    await h.waitForSync(instance, consentId, 0, 'synced')
    const expiringBefore = await counterValue(instance, 'expiring')
    const expiredBefore = await counterValue(instance, 'expired')

    await h.advanceClock('84d')
    const mark = instance.syncs.length
    await expect
      .poll(async () => (await consentState(consentId, 'customer-x')).status, { timeout: 30_000 })
      .toBe('EXPIRING')
    const state = await consentState(consentId, 'customer-x')
    expect(state.expiryNotifiedAt).toEqual(expect.any(String))
    expect(await counterValue(instance, 'expiring')).toBe(expiringBefore + 1)
    // Still syncing: a sync read the 84 new days of history.
    await waitFor('a sync of the expiring consent that published the new days', () =>
      instance.syncs
        .slice(mark)
        .find((s) => s.consentId === consentId && s.outcome.kind === 'synced' && s.outcome.raw > 0),
    )
    // Announced once, not on every sync.
    await h.waitForSync(instance, consentId, instance.syncs.length, 'synced')
    expect(await counterValue(instance, 'expiring')).toBe(expiringBefore + 1)

    await h.advanceClock('7d')
    const outcome = await h.waitForSync(instance, consentId, instance.syncs.length, 'stopped')
    expect(outcome).toEqual({ kind: 'stopped', status: 'EXPIRED' })
    expect(await counterValue(instance, 'expired')).toBe(expiredBefore + 1)
    await expect.poll(async () => (await consentState(consentId, 'customer-x')).status).toBe('EXPIRED')
  })

  it('a consent the customer ends through the gateway is ENDED and no longer synced', async () => {
    const { consentId } = await h.grantThroughGateway(gatewayUrl, 'customer-e', 'user3')
    await h.waitForSync(instance, consentId, 0, 'synced')
    const res = await fetch(`${gatewayUrl}/consents/${consentId}`, {
      method: 'DELETE',
      headers: await as('customer-e'),
    })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { status: string }).status).toBe('ENDED')
    await expect.poll(() => instance.sync.ownedConsent(consentId)?.status).toBe('ENDED')
    const mark = instance.syncs.length
    // Another consent's two syncs prove the scheduler ran meanwhile.
    const other = await h.grantThroughGateway(gatewayUrl, 'customer-f', 'user2')
    await h.waitForSync(instance, other.consentId, mark, 'synced')
    await h.waitForSync(instance, other.consentId, instance.syncs.length, 'synced')
    expect(
      instance.syncs.slice(mark).filter((s) => s.consentId === consentId && s.outcome.kind === 'synced'),
    ).toEqual([])
    const missing = await fetch(`${gatewayUrl}/consents/00000000-0000-0000-0000-000000000000`, {
      headers: await as('customer-e'),
    })
    expect(missing.status).toBe(404)
  })

  it('a non-terminal write that lands after ENDED (a raced writer) is answered by writing ENDED again', async () => {
    const { consentId } = await h.grantThroughGateway(gatewayUrl, 'customer-race', 'user2')
    await h.waitForSync(instance, consentId, 0, 'synced')
    expect(
      (
        await fetch(`${gatewayUrl}/consents/${consentId}`, {
          method: 'DELETE',
          headers: await as('customer-race'),
        })
      ).status,
    ).toBe(200)
    await expect.poll(() => instance.sync.ownedConsent(consentId)?.status).toBe('ENDED')
    const ended = instance.sync.ownedConsent(consentId)
    if (ended === undefined) throw new Error('unreachable')

    // A stale writer (e.g. a sync that read before the end) writes ACTIVE with a higher version.
    const producer = h.kit.producer()
    await producer.connect()
    await producer.send({
      topic: h.topics.consents,
      messages: [
        {
          key: consentId,
          value: await h.codecs.consent.encode({
            ...ended,
            status: 'ACTIVE',
            statusReason: 'STALE',
            version: ended.version + 10,
          }),
        },
      ],
    })

    const records = await h.readUntil(
      h.topics.consents,
      h.codecs.consent,
      'ENDED written again after the stale ACTIVE',
      (r) => {
        const mine = r.filter((c) => c.key === consentId).map((c) => c.value)
        const stale = mine.findIndex((c) => c.statusReason === 'STALE')
        return stale >= 0 && mine.slice(stale + 1).some((c) => c.status === 'ENDED')
      },
    )
    const mine = records.filter((c) => c.key === consentId).map((c) => c.value)
    expect(mine.at(-1)).toMatchObject({ status: 'ENDED', accessToken: null, refreshToken: null })
    expect(mine.at(-1)?.version).toBeGreaterThan(ended.version + 10)
    expect(instance.sync.ownedConsent(consentId)?.status).toBe('ENDED')
    const view = (await (
      await fetch(`${gatewayUrl}/consents/${consentId}`, { headers: await as('customer-race') })
    ).json()) as { status: string }
    expect(view.status).toBe('ENDED')
  })
})

describe('an accounts consent whose 90 days end while bank-sync was not looking', () => {
  let h: Harness
  let instance: Instance
  // bank-sync's own clock: it does not see the bank's jump (as when bank-sync was down > 7 days
  // and its clock and the bank's disagree), so it never announces EXPIRING.
  let ours = SIM_START

  beforeAll(async () => {
    h = await startHarness()
    instance = await h.startInstance({ now: () => ours, sync: { backfillDays: 10 } })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('ends EXPIRED (not REVOKED) when the bank refuses the refresh after the 90 days, without the warning window', async () => {
    const gatewayUrl = instance.sync.gatewayUrl as string
    const { consentId } = await h.grantThroughGateway(gatewayUrl, 'customer-jump', 'user1')
    await h.waitForSync(instance, consentId, 0, 'synced')
    const invalidGrantsBefore = h.sim.context.tokens.counters.invalidGrants

    // In one step: the bank's clock passes the 90 days; ours moves 2 h, so the access
    // token needs a refresh and, as far as bank-sync knows, 88 days are left.
    h.sim.clock.advance(91 * 86_400_000)
    ours = SIM_START + 2 * 3_600_000
    const outcome = await h.waitForSync(instance, consentId, instance.syncs.length, 'stopped')
    expect(outcome).toEqual({ kind: 'stopped', status: 'EXPIRED' })
    // The bank refused the refresh: this is the invalid_grant path, not bank-sync's own expiry check.
    expect(h.sim.context.tokens.counters.invalidGrants).toBeGreaterThan(invalidGrantsBefore)

    const records = (
      await h.readUntil(h.topics.consents, h.codecs.consent, 'the EXPIRED record', (r) =>
        r.some((c) => c.key === consentId && c.value.status === 'EXPIRED'),
      )
    )
      .filter((c) => c.key === consentId)
      .map((c) => c.value)
    expect(records.map((c) => c.status)).not.toContain('REVOKED')
    expect(records.map((c) => c.status)).not.toContain('EXPIRING')
    expect(records.at(-1)).toMatchObject({
      status: 'EXPIRED',
      statusReason: 'CONSENT_90_DAYS',
      accessToken: null,
      refreshToken: null,
    })
  })
})
