import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { bankToday } from '@tep/bank-client'
import { bankTransactionId } from '@tep/bank-sync'
import { createEnrichmentClient } from '@tep/enrichment-client'
import { startEnrichmentSim } from '@tep/enrichment-sim'
import { createKafka } from '@tep/kafka'
import type { EnrichedTransaction } from '@tep/schemas'
import { startTransactionIngest } from '@tep/transaction-ingest'
import { uniqueName } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import { SIM_DATA, startHarness, type Harness, type Instance } from './support/bank-sync-harness.ts'

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
}

describe('a consent granted through the gateway', () => {
  let h: Harness
  let instance: Instance
  let gatewayUrl: string

  beforeAll(async () => {
    h = await startHarness()
    instance = await h.startInstance()
    gatewayUrl = instance.sync.gatewayUrl as string
  })
  afterAll(async () => {
    await h?.close()
  })

  it('publishes every transaction of the consented account once, mapped for enrichment, with the tokens sealed', async () => {
    const account = (await h.accountsOf('user1')).find(
      (a) => a.currency === 'CZK' && a.kind !== 'CREDIT_CARD',
    )
    if (!account) throw new Error('user1 has no CZK current account in the simulator')
    const { consentId, callback } = await h.grantThroughGateway(gatewayUrl, 'customer-42', 'user1', [
      account.id,
    ])
    expect(callback.status).toBe(201)
    const granted = (await callback.json()) as Record<string, unknown>
    expect(granted).toMatchObject({
      consentId,
      customerId: 'customer-42',
      status: 'ACTIVE',
      scopes: ['AISP'],
    })
    expect(JSON.stringify(granted)).not.toMatch(/token/i)

    const outcome = await h.waitForSync(instance, consentId, 0, 'synced')
    const dateFrom = addDays(bankToday(new Date(h.sim.clock.now())), -30)
    const history = await h.bankHistory('user1', account.id, dateFrom)
    expect(history.length).toBeGreaterThan(10)
    expect(outcome).toMatchObject({ kind: 'synced', added: history.length, modified: 0, raw: history.length })

    const raw = await h.readUntil(
      h.topics.raw,
      h.codecs.raw,
      'the raw events of the first sync',
      (r) => r.length >= history.length,
    )
    expect(raw).toHaveLength(history.length)
    const byRef = new Map(raw.map((r) => [r.value.sourceReference, r]))
    for (const t of history) {
      const r = byRef.get(`${consentId}/${account.id}/${t.entryReference}`)
      expect(r, `raw event of entry ${t.entryReference}`).toBeDefined()
      expect(r?.key).toBe(bankTransactionId(consentId, account.id, t.entryReference as string))
      expect(r?.value).toMatchObject({
        source: 'BANK_SYNC',
        customerId: 'customer-42',
        accountId: account.id,
        currency: 'CZK',
      })
    }

    // Card payments carry the acceptor data the bank shows (name, city, country, MCC, TID, MID).
    const historyByRef = new Map(history.map((t) => [t.entryReference as string, t]))
    const cards = raw.filter((r) => r.value.card !== null)
    expect(cards.length).toBeGreaterThan(0)
    for (const { value } of cards) {
      const item = historyByRef.get(value.sourceReference?.split('/')[2] ?? '')
      type Party = { name: string; postalAddress: { townName: string; country: string } }
      const details = item?.entryDetails?.transactionDetails as {
        relatedParties: { creditor: Party; debtor: Party }
        references: { chequeNumber: string }
        additionalTransactionInformation: string
      }
      // The shop is the creditor of a payment and the debtor of a merchant refund.
      const shop =
        item?.creditDebitIndicator === 'CRDT'
          ? details.relatedParties.debtor
          : details.relatedParties.creditor
      expect(value.transfer).toBeNull()
      expect(value.card).toMatchObject({
        description: shop.name,
        city: shop.postalAddress.townName,
        country: shop.postalAddress.country,
        mcc: expect.stringMatching(/^\d{4}$/),
        terminalId: expect.any(String),
        merchantId: expect.any(String),
        // The bank never shows a BIN in the simulator's masked numbers: absent, not guessed.
        cardBin: null,
        acquirerId: null,
      })
      expect(details.additionalTransactionInformation).toContain(`MCC ${value.card?.mcc}`)
      // The masked card number is not carried on the raw event.
      expect(JSON.stringify(value)).not.toContain(details.references.chequeNumber)
    }
    // Transfers name their counterparty and scheme; Czech payments carry the symbols when the bank sends them.
    const transfers = raw.filter((r) => r.value.transfer !== null)
    expect(transfers.length).toBeGreaterThan(0)
    for (const { value } of transfers) expect(value.transfer?.scheme).toBe('CERTIS')
    expect(transfers.some((t) => t.value.transfer?.variableSymbol !== null)).toBe(true)
    expect(
      transfers.some(
        (t) =>
          t.value.transfer?.counterpartyIban !== null || t.value.transfer?.counterpartyAccountNumber !== null,
      ),
    ).toBe(true)

    const bankTx = await h.readUntil(
      h.topics.bankTransactions,
      h.codecs.bankTransaction,
      'the bank transactions of the first sync',
      (r) => r.length >= history.length,
    )
    expect(bankTx).toHaveLength(history.length)
    expect(
      bankTx.every(
        (b) =>
          b.value.changeType === 'ADDED' && b.key === `${consentId}/${account.id}/${b.value.entryReference}`,
      ),
    ).toBe(true)

    // The consent record: tokens only as envelopes bound to the consent, a watermark per account.
    const consents = (
      await h.readUntil(h.topics.consents, h.codecs.consent, 'the consent record of the first sync', (r) =>
        r.some((c) => c.key === consentId && c.value.accounts.length === 1),
      )
    ).filter((c) => c.key === consentId)
    const latest = consents.at(-1)?.value
    expect(latest?.status).toBe('ACTIVE')
    expect(latest?.accessToken).toMatch(/^v1\.test\./)
    expect(latest?.refreshToken).toMatch(/^v1\.test\./)
    expect(latest?.accounts).toHaveLength(1)
    expect(latest?.accounts[0]?.lastBookingDate).toMatch(/^\d{4}-\d{2}-\d{2}$/)

    const view = await fetch(`${gatewayUrl}/consents/${consentId}`, {
      headers: { authorization: `Bearer ${await h.customerToken('customer-42')}` },
    })
    expect(view.status).toBe(200)
    const shown = (await view.json()) as { status: string; accounts: Array<{ accountId: string }> }
    expect(shown.status).toBe('ACTIVE')
    expect(JSON.stringify(shown)).not.toMatch(/v1\.test\./)
  })

  it('refuses a callback whose state was already used, forged, or denied at the bank', async () => {
    const { state, codeChallenge, cookie } = await h.startConsent(gatewayUrl, 'customer-43')
    const granted = await h.admin<{ redirectUrl: string }>('POST', '/__admin/consents', {
      username: 'user2',
      scope: 'AISP',
      state,
      codeChallenge,
    })
    const first = await fetch(granted.redirectUrl, { headers: { accept: 'application/json', cookie } })
    expect(first.status).toBe(201)
    const replay = await fetch(granted.redirectUrl, { headers: { accept: 'application/json', cookie } })
    expect(replay.status).toBe(400)
    expect(await replay.json()).toMatchObject({ error: 'CONSENT_STATE_REUSED' })

    const forged = `${state.slice(0, -4)}AAAA`
    const bad = await fetch(`${h.redirectUri}?code=abc&state=${encodeURIComponent(forged)}`, {
      headers: { accept: 'application/json' },
    })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ error: 'CONSENT_STATE_BAD_SIGNATURE' })

    const again = await h.startConsent(gatewayUrl, 'customer-44')
    const denied = await fetch(
      `${h.redirectUri}?error=access_denied&state=${encodeURIComponent(again.state)}`,
      { headers: { accept: 'text/html', cookie: again.cookie } },
    )
    expect(denied.status).toBe(403)
    expect(await denied.text()).toContain('declined')

    // The authorization URL the gateway sends the browser to: the bank's page, PKCE S256.
    const location = new URL((await h.startConsent(gatewayUrl, 'customer-45')).authorizationUrl)
    expect(`${location.origin}${location.pathname}`).toBe(`${h.sim.url}/oauth2/authorize`)
    expect(location.searchParams.get('redirect_uri')).toBe(h.redirectUri)
    expect(location.searchParams.get('scope')).toBe('AISP')
    expect(location.searchParams.get('state')).toEqual(expect.any(String))
    expect(location.searchParams.get('code_challenge_method')).toBe('S256')

    // No customer token, no consent (the identity is never taken from the request).
    const anonymous = await fetch(`${gatewayUrl}/consents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'customer-46' }),
    })
    expect(anonymous.status).toBe(401)
    expect(await anonymous.json()).toMatchObject({ error: 'CUSTOMER_TOKEN_MISSING' })
  })

  it('and the bank transactions come out of enrichment: one outcome each, card payments matched to their shops', async () => {
    let raw = await h.readAll(h.topics.raw, h.codecs.raw)
    expect(raw.length).toBeGreaterThan(0)
    const enrichmentSim = await startEnrichmentSim(SIM_DATA)
    const base = uniqueName('bank-sync-ingest')
    const topics = {
      input: h.topics.raw,
      enriched: `${base}.enriched`,
      dlq: `${base}.dlq`,
      fetched: `${base}.fetched`,
      shops: `${base}.shops`,
      merchants: `${base}.merchants`,
    }
    await h.kit.createTopics([topics.enriched, topics.dlq, topics.fetched], 3)
    await h.kit.createTopics([topics.shops, topics.merchants], 3, { 'cleanup.policy': 'compact' })
    const client = createEnrichmentClient({
      baseUrl: enrichmentSim.url,
      tokenUrl: enrichmentSim.tokenUrl,
      credentials: { type: 'oauth', clientId: 'sim-client', clientSecret: 'sim-secret' },
    })
    const ingest = await startTransactionIngest({
      kafka: createKafka({ brokers: inject('kafkaBrokers'), clientId: `${base}-client`, logLevel: 'error' }),
      schemaRegistry: h.schemaRegistry,
      client,
      topics,
      groupId: `${base}.group`,
      transactionalIdPrefix: `${base}.tx`,
      consumer: { sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 200 },
    })
    try {
      const enrichedCodec = h.serde.topic(topics.enriched, 'EnrichedTransaction')
      let enriched: Array<{ key: string; value: EnrichedTransaction }> = []
      await waitFor(
        `an enriched record for each of the ${raw.length} raw bank events`,
        async () => {
          enriched = await h.readAll(topics.enriched, enrichedCodec)
          // Read again: a sync still running would add raw events the ingest must also cover.
          raw = await h.readAll(h.topics.raw, h.codecs.raw)
          return enriched.length >= raw.length
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      )
      const dlq = h.kit.admin()
      await dlq.connect()
      const dlqOffsets = await dlq.fetchTopicOffsets(topics.dlq)
      expect(dlqOffsets.every((p) => p.high === p.low)).toBe(true)

      const byId = new Map<string, EnrichedTransaction[]>()
      for (const e of enriched) byId.set(e.key, [...(byId.get(e.key) ?? []), e.value])
      for (const r of raw) expect(byId.get(r.key), `enriched record of ${r.key}`).toHaveLength(1)
      expect(enriched).toHaveLength(raw.length)

      const cards = raw.filter((r) => r.value.card !== null)
      for (const card of cards) {
        const e = byId.get(card.key)?.[0]
        expect(e?.status, `card payment ${card.value.card?.description}`).toBe('MATCHED')
        expect(e?.shopUid).toEqual(expect.any(String))
      }
      const transfers = raw.filter((r) => r.value.transfer !== null)
      expect(transfers.some((t) => byId.get(t.key)?.[0]?.status === 'MATCHED')).toBe(true)
    } finally {
      await ingest.stop()
      await client.close()
      await enrichmentSim.close()
    }
  })
})
