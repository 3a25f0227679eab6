/**
 * The forged-link attack: an attacker who is a customer of the bank application
 * starts a consent for HIS customer id and gets a victim to open the bank's
 * authorization link. The victim logs in at the bank and grants access; the
 * bank redirects the VICTIM's browser to the gateway callback. The gateway must
 * refuse it (the flow belongs to another browser) and record nothing, so the
 * victim's accounts never land under the attacker's customer id. The old
 * `GET /consents/start?customerId=` link is gone, and a consent cannot start
 * without the bank application's customer token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startHarness, type Harness, type Instance } from './support/bank-sync-harness.ts'

describe('consent gateway against the forged-link attack', () => {
  let h: Harness
  let instance: Instance
  let gatewayUrl: string

  beforeAll(async () => {
    h = await startHarness({ partitions: 1 })
    instance = await h.startInstance()
    gatewayUrl = instance.sync.gatewayUrl as string
  })
  afterAll(async () => {
    await h?.close()
  })

  it("refuses the bank's redirect in the victim's browser and records no consent for the attacker", async () => {
    // The attacker, logged in to the bank application in his own browser.
    const attacker = await h.startConsent(gatewayUrl, 'attacker')
    expect(attacker.cookie).toMatch(/^tep_consent_/)

    // The victim opens the attacker's authorization link and grants access at the bank.
    const granted = await h.admin<{ redirectUrl: string; consentId: string }>('POST', '/__admin/consents', {
      username: 'user1',
      scope: 'AISP',
      state: attacker.state,
      codeChallenge: attacker.codeChallenge,
    })
    // The victim's browser follows the bank's redirect: it has no cookie of that flow.
    const victim = await fetch(granted.redirectUrl, { headers: { accept: 'application/json' } })
    expect(victim.status).toBe(403)
    expect(await victim.json()).toMatchObject({ error: 'CONSENT_BROWSER_MISMATCH' })
    // A cookie of the victim's own (another flow) does not fit this state either.
    const own = await h.startConsent(gatewayUrl, 'victim')
    const mixed = await fetch(granted.redirectUrl, {
      headers: { accept: 'application/json', cookie: `${attacker.cookie.split('=')[0]}=${own.cookie.split('=')[1]}` },
    })
    expect(mixed.status).toBe(403)

    // The code was never exchanged: the bank still has the consent unexchanged.
    const bank = await h.admin<{ consents: Array<{ consentId: string; exchanged: boolean }> }>(
      'GET',
      '/__admin/consents',
    )
    expect(bank.consents.find((c) => c.consentId === granted.consentId)?.exchanged).toBe(false)

    // Nothing was written: a legitimate consent written afterwards is the only record.
    const legit = await h.grantThroughGateway(gatewayUrl, 'victim', 'user2')
    expect(legit.callback.status).toBe(201)
    const records = await h.readUntil(h.topics.consents, h.codecs.consent, 'the legitimate consent', (r) =>
      r.some((c) => c.key === legit.consentId),
    )
    expect(records.map((r) => r.value.customerId)).toEqual(['victim'])
    expect(records.some((r) => r.key === attacker.consentId)).toBe(false)
  })

  it('has no start-by-link and starts nothing without a valid customer token', async () => {
    const link = await fetch(`${gatewayUrl}/consents/start?customerId=attacker`, { redirect: 'manual' })
    expect(link.status).toBe(410)
    expect(link.headers.get('location')).toBeNull()
    const anonymous = await fetch(`${gatewayUrl}/consents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'attacker' }),
    })
    expect(anonymous.status).toBe(401)
    const forged = await fetch(`${gatewayUrl}/consents`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        // A token signed with a key other than the bank application's.
        authorization: `Bearer ${(await h.customerToken('victim')).slice(0, -4)}AAAA`,
      },
      body: '{}',
    })
    expect(forged.status).toBe(401)
    expect(await forged.json()).toMatchObject({ error: 'CUSTOMER_TOKEN_INVALID' })
    for (const res of [link, anonymous, forged]) {
      expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/)
      expect(res.headers.get('referrer-policy')).toBe('no-referrer')
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    }
  })
})
