import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startHarness, type Harness, type Instance } from './support/bank-sync-harness.ts'

describe('the bank throttling (429 with Retry-After)', () => {
  let h: Harness
  let instance: Instance

  beforeAll(async () => {
    h = await startHarness()
    instance = await h.startInstance()
  })
  afterAll(async () => {
    await h?.admin('DELETE', '/__admin/faults').catch(() => undefined)
    await h?.close()
  })

  it('backs the consent off, shows in metrics, and loses nothing once the bank answers again', async () => {
    const account = (await h.accountsOf('user2')).find((a) => a.currency === 'CZK')
    if (!account) throw new Error('user2 has no CZK account in the simulator')
    const { consentId } = await h.grantThroughGateway(
      instance.sync.gatewayUrl as string,
      'customer-t',
      'user2',
      [account.id],
    )
    const first = await h.waitForSync(instance, consentId, 0, 'synced')
    if (first.kind !== 'synced') throw new Error('unreachable')
    const rawBefore = first.raw
    expect(rawBefore).toBeGreaterThan(0)
    expect(
      await h.readUntil(h.topics.raw, h.codecs.raw, 'the first sync', (r) => r.length >= rawBefore),
    ).toHaveLength(rawBefore)

    // Exactly one bank call's worth of 429s (the first try and the client's 4 in-line retries).
    await h.admin('PUT', '/__admin/faults', {
      throttleRate: 1,
      retryAfterSeconds: 1,
      pathPrefix: '/accounts',
      count: 5,
    })
    await h.admin('POST', '/__admin/transactions', {
      accountId: account.id,
      transactions: [{ type: 'CARD', amount: 99.5, shopIndex: 7, entryReference: 'AFTER-THROTTLE' }],
    })
    const mark = instance.syncs.length
    const backoff = await h.waitForSync(instance, consentId, mark, 'backoff')
    expect(backoff).toMatchObject({ kind: 'backoff', code: 'BANK_THROTTLED' })
    const errors = await instance.sync.metrics.apiErrors.get()
    expect(errors.values.find((v) => v.labels.code === 'BANK_THROTTLED')?.value).toBeGreaterThanOrEqual(1)
    // The consent is not given up: still ACTIVE.
    expect(instance.sync.ownedConsent(consentId)?.status).toBe('ACTIVE')

    const after = await h.waitForSync(instance, consentId, mark, 'synced')
    expect(after).toMatchObject({ added: 1, raw: 1 })
    const raw = await h.readUntil(
      h.topics.raw,
      h.codecs.raw,
      'the entry after the throttling',
      (r) => r.length >= rawBefore + 1,
    )
    expect(raw).toHaveLength(rawBefore + 1)
    expect(raw.filter((r) => r.value.sourceReference?.endsWith('/AFTER-THROTTLE'))).toHaveLength(1)
  })
})
