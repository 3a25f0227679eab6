import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ContractDriftMode } from '@tep/bank-sim'
import { waitFor } from '../support/wait-for.ts'
import { SIM_START, startHarness, type Harness, type Instance } from './support/bank-sync-harness.ts'

/**
 * A drift seed whose first token answer (the consent's code exchange) has no `expires_in`:
 * the mode is seeded, and nothing draws before that answer but the /payments spelling.
 */
function seedWithoutExpiresInFirst(): string {
  for (let i = 0; ; i++) {
    const seed = `bank-sync-drift-${i}`
    const answer = new ContractDriftMode(seed).tokenAnswer({
      access_token: 'a',
      refresh_token: 'r',
      expires_in: 3600,
      scope: 'AISP',
    })
    if (!('expires_in' in answer)) return seed
  }
}

function driftCount(text: string, field: string, kind: string): number {
  return text
    .split('\n')
    .filter(
      (l) =>
        l.startsWith('tep_api_contract_drift_total{') &&
        l.includes('api="bank"') &&
        l.includes(`field="${field}"`) &&
        l.includes(`kind="${kind}"`),
    )
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0)
}

describe('bank-sync against a bank that answers in the shapes its description leaves open', () => {
  let h: Harness
  let instance: Instance
  // bank-sync's own clock: it does not follow the bank's, so an access token it believes
  // valid can be one the bank has let expire (answered with a bare 401 in drift mode).
  const ours = SIM_START

  beforeAll(async () => {
    h = await startHarness({ contractDrift: seedWithoutExpiresInFirst() })
    instance = await h.startInstance({ now: () => ours, sync: { backfillDays: 10 } })
  })
  afterAll(async () => {
    await h?.close()
  })

  it('keeps a consent ACTIVE through a token answer without expires_in and an expired token answered with a bare 401; transactions keep flowing; drift counted', async () => {
    const gatewayUrl = instance.sync.gatewayUrl as string
    const account = (await h.accountsOf('user1')).find(
      (a) => a.currency === 'CZK' && a.kind !== 'CREDIT_CARD',
    )
    if (!account) throw new Error('user1 has no CZK current account in the simulator')
    const { consentId, callback } = await h.grantThroughGateway(gatewayUrl, 'customer-drift', 'user1', [
      account.id,
    ])
    expect(callback.status).toBe(201)
    await h.waitForSync(instance, consentId, 0, 'synced')
    const granted = instance.sync.ownedConsent(consentId)
    // no expires_in: the documented default lifetime (5 minutes), not a failed consent
    expect(granted?.accessTokenExpiresAt).toBe(SIM_START + 5 * 60_000)
    expect(
      driftCount(await instance.sync.metricsRegistry.metrics(), 'expires_in', 'absent'),
    ).toBeGreaterThanOrEqual(1)

    // The bank's clock runs two hours ahead: the access token expired there, not here.
    const invalidGrantsBefore = h.sim.context.tokens.counters.invalidGrants
    const refreshesBefore = h.sim.context.tokens.counters.refreshes
    await h.advanceClock('2h')
    await h.admin('POST', '/__admin/transactions', {
      accountId: account.id,
      transactions: [
        {
          type: 'TRANSFER',
          amount: 321,
          creditDebitIndicator: 'DBIT',
          entryReference: 'DRIFT-1',
          counterparty: { name: 'Drift Landlord', number: '2000145399', prefix: '19', bankCode: '0800' },
        },
      ],
    })
    const records = await h.readUntil(
      h.topics.bankTransactions,
      h.codecs.bankTransaction,
      'the entry booked after the bare 401',
      (r) => r.some((t) => t.value.consentId === consentId && t.value.entryReference === 'DRIFT-1'),
    )
    expect(records.filter((t) => t.value.entryReference === 'DRIFT-1')).toHaveLength(1)

    const metrics = await instance.sync.metricsRegistry.metrics()
    expect(driftCount(metrics, 'REASON', 'bare-401')).toBeGreaterThanOrEqual(1)
    // cured by a refresh, never by a new consent
    expect(h.sim.context.tokens.counters.refreshes).toBeGreaterThan(refreshesBefore)
    expect(h.sim.context.tokens.counters.invalidGrants).toBe(invalidGrantsBefore)
    expect(instance.sync.ownedConsent(consentId)?.status).toBe('ACTIVE')
    expect(instance.syncs.filter((s) => s.consentId === consentId && s.outcome.kind === 'stopped')).toEqual(
      [],
    )
    expect(metrics).not.toMatch(/bank_sync_api_errors_total\{code="CONSENT_PAUSED_UNAUTHORIZED"/)
    const stats = await h.admin<{ contractDrift: { drawn: Record<string, number> } }>('GET', '/__admin/stats')
    expect(
      Object.keys(stats.contractDrift.drawn).filter((k) => k.startsWith('401.token-expired=')),
    ).not.toEqual([])
    const written = (await h.readAll(h.topics.consents, h.codecs.consent))
      .filter((c) => c.key === consentId)
      .map((c) => c.value.status)
    expect(written).not.toContain('REVOKED')
    expect(written).not.toContain('EXPIRED')
  })

  it('still ends a consent the customer revokes at the bank as REVOKED', async () => {
    const gatewayUrl = instance.sync.gatewayUrl as string
    const { consentId, bankConsentId } = await h.grantThroughGateway(gatewayUrl, 'customer-drift-r', 'user2')
    await h.waitForSync(instance, consentId, 0, 'synced')
    await h.admin('POST', '/__admin/revoke', { consentId: bankConsentId })
    const outcome = await h.waitForSync(instance, consentId, instance.syncs.length, 'stopped')
    expect(outcome).toEqual({ kind: 'stopped', status: 'REVOKED' })
    await waitFor('the REVOKED record', async () =>
      (await h.readAll(h.topics.consents, h.codecs.consent)).some(
        (c) => c.key === consentId && c.value.status === 'REVOKED',
      ),
    )
  })
})
