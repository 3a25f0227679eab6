import type { Consent } from '@tep/schemas'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { uniqueName } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import { startHarness, type Harness, type Instance } from './support/bank-sync-harness.ts'

/**
 * The re-assignment attack: whoever can produce to bank.consents.v1 copies a victim's consent
 * record (its sealed tokens included) under their own customerId, so that bank-sync would
 * publish the victim's bank transactions as theirs. Refused twice over: an owner that knows the
 * consent keeps its customer, and where the victim's record is gone (compaction keeps only the
 * latest record of a key) the tokens, bound to consent AND customer, do not decrypt.
 */
describe('a consent record moved to another customer', () => {
  let h: Harness
  let a: Instance
  let victim: Consent
  const VICTIM = 'customer-victim'
  const ATTACKER = 'customer-attacker'

  beforeAll(async () => {
    h = await startHarness({ partitions: 1 })
    a = await h.startInstance()
    const { consentId } = await h.grantThroughGateway(a.sync.gatewayUrl as string, VICTIM, 'user1')
    await h.waitForSync(a, consentId, 0, 'synced')
    victim = await waitFor('the victim consent, synced, in its owner', () => a.sync.ownedConsent(consentId))
  })
  afterAll(async () => {
    await h?.close()
  })

  const moved = (): Consent => ({ ...victim, customerId: ATTACKER, version: victim.version + 100 })

  it('is refused by the owner that knows the consent: the customer stays, nothing is published for the other customer', async () => {
    const producer = h.kit.producer()
    await producer.connect()
    try {
      await producer.send({
        topic: h.topics.consents,
        messages: [{ key: victim.consentId, value: await h.codecs.consent.encode(moved()) }],
      })
    } finally {
      await producer.disconnect()
    }
    await h.readUntil(h.topics.consents, h.codecs.consent, 'the moved record in the consents topic', (r) =>
      r.some((c) => c.value.customerId === ATTACKER),
    )
    // Two more syncs of the consent after the moved record is in the log: the owner read it by then.
    const after = a.syncs.length
    await h.waitForSync(a, victim.consentId, after, 'synced')
    await h.waitForSync(a, victim.consentId, a.syncs.length, 'synced')
    expect(a.sync.ownedConsent(victim.consentId)?.customerId).toBe(VICTIM)
    const raw = await h.readAll(h.topics.raw, h.codecs.raw)
    expect(raw.length).toBeGreaterThan(0)
    expect(raw.filter((r) => r.value.customerId === ATTACKER)).toEqual([])
  })

  it('is never synced where only the moved record is left (compacted topic, new instance): its tokens do not decrypt', async () => {
    const topics = {
      consents: uniqueName('bank.consents.moved'),
      bankTransactions: uniqueName('bank.transactions.moved'),
      raw: uniqueName('transactions.raw.moved'),
    }
    await h.kit.createTopics([topics.consents], 1, { 'cleanup.policy': 'compact' })
    await h.kit.createTopics([topics.bankTransactions, topics.raw], 1)
    const codec = h.serde.topic(topics.consents, 'Consent')
    const producer = h.kit.producer()
    await producer.connect()
    try {
      await producer.send({
        topic: topics.consents,
        messages: [{ key: victim.consentId, value: await codec.encode(moved()) }],
      })
    } finally {
      await producer.disconnect()
    }
    const c = await h.startInstance({
      topics,
      groupId: uniqueName('bank-sync-moved'),
      transactionalIdPrefix: uniqueName('bank-sync-moved-tx'),
      gateway: false,
    })
    const outcome = await h.waitForSync(c, victim.consentId, 0)
    expect(outcome).toMatchObject({ kind: 'backoff', code: 'TOKEN_DECRYPTION_FAILED' })
    const raw = await h.readAll(topics.raw, h.serde.topic(topics.raw, 'RawTransaction'))
    const bank = await h.readAll(topics.bankTransactions, h.serde.topic(topics.bankTransactions, 'BankTransaction'))
    expect(raw).toEqual([])
    expect(bank).toEqual([])
  })
})
