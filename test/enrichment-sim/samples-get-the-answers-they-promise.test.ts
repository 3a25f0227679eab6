import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEnrichmentSim } from '@tep/enrichment-sim'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { admin, bearer, call, samples, token } from './sim-test-kit.ts'
import type { Sample } from './sim-test-kit.ts'

/**
 * `/__admin/samples` is what users script their sandbox tests with, so each sample
 * must get the answer it promises from the real API, also after the data changed.
 */

let sim: EnrichmentSim
let accessToken: string

beforeAll(async () => {
  sim = await startEnrichmentSim({ seed: 51, shops: 6_000, merchants: 600 })
  accessToken = await token(sim)
})

afterAll(async () => {
  await sim?.close()
})

async function check(sample: Sample): Promise<void> {
  const res = await call(sim, { path: sample.path, query: sample.input, headers: bearer(accessToken) })
  const what = `${sample.operation} ${JSON.stringify(sample.input)} → ${res.status} ${JSON.stringify(res.body)}`
  switch (sample.expected.outcome) {
    case 'found':
      expect(res.status, what).toBe(200)
      expect(res.body, what).toEqual({ result: 'found', handle: sample.expected.handle, shop: { uid: sample.expected.shopUid } })
      break
    case 'notFound':
      expect(res.status, what).toBe(200)
      expect(res.body, what).toEqual({ result: 'notFound', handle: expect.stringMatching(/^[0-9A-Za-z]{22}$/) })
      break
    case 'invalid':
      expect(res.status, what).toBe(400)
      expect(res.body, what).toEqual({ error: { code: sample.expected.code, message: expect.any(String), ...(sample.expected.parameter === undefined ? {} : { parameter: sample.expected.parameter }) } })
      break
  }
}

describe('sample inputs', () => {
  it('get the promised answer for every kind and outcome', async () => {
    const all = await samples(sim, { count: 400, seed: 1 })
    expect(new Set(all.map((s) => `${s.kind}/${s.expected.outcome}`))).toEqual(new Set(['card/found', 'card/notFound', 'card/invalid', 'transfer/found', 'transfer/notFound', 'transfer/invalid']))
    for (const sample of all) await check(sample)
  })

  it('still do after deletions and remaps, which they take into account', async () => {
    await admin(sim, 'POST', '/__admin/mutations', { kind: 'random', count: 300 })
    const live = (await samples(sim, { count: 60, outcome: 'found', seed: 2 })).filter((s) => s.expected.outcome === 'found')
    const [first, second, third] = live.filter((s, i) => live.findIndex((o) => o.expected.shopUid === s.expected.shopUid) === i) as [Sample, Sample, Sample]
    await admin(sim, 'POST', '/__admin/mutations', { kind: 'deleteShop', shopUid: first.expected.shopUid })
    await admin(sim, 'POST', '/__admin/mutations', { kind: 'remap', handle: second.expected.handle, toShopUid: third.expected.shopUid })
    const after = await samples(sim, { count: 60, outcome: 'found', seed: 2 })
    const firstAfter = after.find((s) => s.expected.handle === first.expected.handle)
    const secondAfter = after.find((s) => s.expected.handle === second.expected.handle)
    if (first.kind === 'card') expect(firstAfter?.expected).toEqual({ outcome: 'notFound', handle: first.expected.handle })
    else expect(firstAfter?.expected.shopUid).not.toBe(first.expected.shopUid)
    expect(secondAfter?.expected).toMatchObject({ outcome: 'found', shopUid: third.expected.shopUid })
    for (const sample of after) await check(sample)
  })

  it('/__admin/shops/{uid} shows the card identifiers that find the shop', async () => {
    const sample = (await samples(sim, { count: 10, kind: 'card', outcome: 'found', seed: 4 })).find((s) => s.expected.outcome === 'found' && s.expected.rule !== 'remap') as Sample
    const inside = await admin<{ live: boolean; card: { terminalIds: string[]; acceptorName: string; acceptorCity: string }; merchant: { uid: string } }>(sim, 'GET', `/__admin/shops/${sample.expected.shopUid}`)
    expect(inside.live).toBe(true)
    expect(inside.merchant.uid).toBe(sample.expected.merchantUid)
    for (const terminalId of inside.card.terminalIds) {
      const res = await call(sim, { path: '/v5/shops/findByCardTransaction', query: { terminalId }, headers: bearer(accessToken) })
      expect(res.body).toMatchObject({ result: 'found', shop: { uid: sample.expected.shopUid } })
    }
    expect((await call(sim, { path: '/__admin/shops/unknown' })).status).toBe(404)
  })

  it('complete lookups carry the same shop and merchant as the entity reads', async () => {
    const found = (await samples(sim, { count: 10, kind: 'card', outcome: 'found', seed: 3 })).filter((s) => s.expected.outcome === 'found')
    for (const sample of found) {
      const complete = await call(sim, { path: '/v5/shops/complete/findByCardTransaction', query: sample.input, headers: bearer(accessToken) })
      const shop = await call(sim, { path: `/v5/shops/${sample.expected.shopUid}`, headers: bearer(accessToken) })
      const merchant = await call(sim, { path: `/v5/merchants/${encodeURIComponent(sample.expected.merchantUid as string)}`, headers: bearer(accessToken) })
      expect(complete.body).toEqual({ result: 'found', handle: sample.expected.handle, shop: shop.body, merchant: merchant.body })
      expect((shop.body as { merchantUid: string }).merchantUid).toBe(sample.expected.merchantUid)
    }
  })
})
