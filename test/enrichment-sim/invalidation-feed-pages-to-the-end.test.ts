import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEnrichmentSim } from '@tep/enrichment-sim'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { waitFor } from '../support/wait-for.ts'
import { admin, bearer, call, samples, token } from './sim-test-kit.ts'
import type { Sample } from './sim-test-kit.ts'

interface Item {
  id: number
  level: 'shop' | 'merchant' | 'handle'
  type: 'update' | 'delete' | 'remap'
  key: string
  at: string
}

interface Page {
  data: { currentTime: string; batches: Array<{ level: string; type: string; ids: number[]; keys: string[] }> }
  paging: { fromId: number; toId: number | null; pageSize: number; lastId: number; hasMore: boolean }
}

let sim: EnrichmentSim
let accessToken: string

beforeAll(async () => {
  sim = await startEnrichmentSim({ seed: 21, shops: 5_000, merchants: 500 })
  accessToken = await token(sim)
})

afterAll(async () => {
  await sim?.close()
})

async function page(query: Record<string, string>): Promise<Page> {
  const res = await call(sim, { path: '/v5/invalidations', query, headers: bearer(accessToken) })
  if (res.status !== 200) throw new Error(`invalidations ${JSON.stringify(query)} answered ${res.status}: ${JSON.stringify(res.body)}`)
  return res.body as Page
}

/** The newest item id, from item/range with a moment in the future. */
async function newestId(): Promise<number> {
  const res = await call(sim, { path: '/v5/invalidations/item/range', query: { from: '2999-01-01T00:00:00Z' }, headers: bearer(accessToken) })
  return (res.body as { data: { toId: number } }).data.toId
}

/** Follows `paging.lastId` until `hasMore` is false, as a client does. */
async function drain(fromId: number, extra: Record<string, string>): Promise<{ items: Array<{ id: number; level: string; type: string; key: string }>; pages: number; cursor: number }> {
  const items: Array<{ id: number; level: string; type: string; key: string }> = []
  let cursor = fromId
  for (let pages = 1; pages <= 10_000; pages++) {
    const current = await page({ fromId: String(cursor), ...extra })
    for (const batch of current.data.batches) {
      expect(batch.ids).toHaveLength(batch.keys.length)
      batch.ids.forEach((id, i) => items.push({ id, level: batch.level, type: batch.type, key: batch.keys[i] as string }))
    }
    expect(current.paging.lastId).toBeGreaterThanOrEqual(cursor)
    cursor = current.paging.lastId
    if (!current.paging.hasMore) return { items, pages, cursor }
  }
  throw new Error('the feed did not end within 10,000 pages')
}

describe('the invalidation feed', () => {
  it('pages through thousands of changes to the end: every item once, in id order, for several page sizes', async () => {
    const start = await newestId()
    const { items } = await admin<{ items: Item[] }>(sim, 'POST', '/__admin/mutations', { kind: 'random', count: 2_500 })
    expect(items.length).toBeGreaterThanOrEqual(2_500)
    expect(items.map((i) => i.id)).toEqual(items.map((_, i) => start + i + 1))
    expect(new Set(items.map((i) => i.level))).toEqual(new Set(['shop', 'merchant', 'handle']))
    const expected = items.map(({ id, level, type, key }) => ({ id, level, type, key }))

    for (const pageSize of [1_000, 333, 7]) {
      const result = await drain(start, { pageSize: String(pageSize) })
      expect(result.items).toEqual(expected)
      expect(result.pages).toBe(Math.ceil(items.length / pageSize))
      expect(result.cursor).toBe(items.at(-1)?.id)
    }
    const defaults = await page({ fromId: String(start) })
    expect(defaults.paging.pageSize).toBe(100)
    expect(defaults.data.batches.flatMap((b) => b.ids)).toHaveLength(100)
  })

  it('filters by level and honours toId, and the cursor passes over a filtered-out tail', async () => {
    const start = await newestId()
    const { items } = await admin<{ items: Item[] }>(sim, 'POST', '/__admin/mutations', { kind: 'random', count: 200 })
    const toId = items[120]?.id as number
    const result = await drain(start, { level: 'merchant,handle', toId: String(toId), pageSize: '9' })
    expect(result.items).toEqual(items.filter((i) => i.level !== 'shop' && i.id <= toId).map(({ id, level, type, key }) => ({ id, level, type, key })))
    expect(result.cursor).toBe(toId)
    // Nothing newer than the last page: an empty page keeps the cursor where it is.
    const tail = await drain(items.at(-1)?.id as number, { level: 'shop' })
    expect(tail).toEqual({ items: [], pages: 1, cursor: items.at(-1)?.id })
  })

  it('item/range turns a moment into the cursor before the first change made at or after it', async () => {
    const clock = await admin<{ now: string }>(sim, 'POST', '/__admin/clock', { advanceSeconds: 3_600 })
    // An hour of simulator time has expired the token.
    accessToken = await token(sim)
    const { items } = await admin<{ items: Item[] }>(sim, 'POST', '/__admin/mutations', { kind: 'random', count: 5 })
    const res = await call(sim, { path: '/v5/invalidations/item/range', query: { from: clock.now }, headers: bearer(accessToken) })
    expect(res.status).toBe(200)
    const range = (res.body as { data: { fromId: number; toId: number; currentTime: string } }).data
    expect(range.fromId).toBe((items[0]?.id as number) - 1)
    expect(range.toId).toBe(items.at(-1)?.id)
    expect(Date.parse(range.currentTime)).toBeGreaterThanOrEqual(Date.parse(clock.now))
    const later = await call(sim, { path: '/v5/invalidations/item/range', query: { from: new Date(Date.parse(clock.now) + 86_400_000).toISOString() }, headers: bearer(accessToken) })
    expect((later.body as { data: { fromId: number; toId: number } }).data).toMatchObject({ fromId: range.toId, toId: range.toId })
  })

  it('announces changes the API really shows: updated shop, rebranded merchant, remapped handle, deleted shop', async () => {
    // Earlier random changes may have deleted some sample shops: take two that still resolve.
    const live = (await samples(sim, { count: 20, kind: 'card', outcome: 'found', seed: 5 })).filter((s) => s.expected.outcome === 'found')
    const [sample, other] = live as [Sample, Sample]
    const shopUid = sample.expected.shopUid as string
    const merchantUid = sample.expected.merchantUid as string
    const get = (path: string) => call(sim, { path, headers: bearer(accessToken) })
    const shopBefore = (await get(`/v5/shops/${shopUid}`)).body

    const update = await admin<{ items: Item[] }>(sim, 'POST', '/__admin/mutations', { kind: 'shopUpdate', shopUid })
    expect(update.items.map((i) => [i.level, i.type, i.key])).toEqual([['shop', 'update', shopUid]])
    expect((await get(`/v5/shops/${shopUid}`)).body).not.toEqual(shopBefore)

    const rebrand = await admin<{ items: Item[] }>(sim, 'POST', '/__admin/mutations', { kind: 'rebrand', merchantUid, name: 'Zlatý Klas', logo: 'https://logos.enrichment-sim.example/zlaty-klas.png' })
    expect(rebrand.items.map((i) => [i.level, i.type, i.key])).toEqual([['merchant', 'update', merchantUid]])
    expect((await get(`/v5/merchants/${encodeURIComponent(merchantUid)}`)).body).toMatchObject({ name: 'Zlatý Klas', logo: 'https://logos.enrichment-sim.example/zlaty-klas.png' })

    const lookup = await call(sim, { path: '/v5/shops/findByCardTransaction', query: sample.input, headers: bearer(accessToken) })
    const handle = (lookup.body as { handle: string }).handle
    const remap = await admin<{ items: Item[] }>(sim, 'POST', '/__admin/mutations', { kind: 'remap', handle, toShopUid: other.expected.shopUid })
    expect(remap.items.map((i) => [i.level, i.type, i.key])).toEqual([['handle', 'remap', handle]])
    const relookup = await call(sim, { path: '/v5/shops/findByCardTransaction', query: { ...sample.input, refresh: 'true' }, headers: bearer(accessToken) })
    expect(relookup.body).toEqual({ result: 'found', handle, shop: { uid: other.expected.shopUid } })
    expect(((await get(`/v5/shops/${handle}`)).body as { uid: string }).uid).toBe(other.expected.shopUid)

    const deletion = await admin<{ items: Item[] }>(sim, 'POST', '/__admin/mutations', { kind: 'deleteShop', shopUid })
    expect(deletion.items.map((i) => [i.level, i.type, i.key])).toEqual([['shop', 'delete', shopUid]])
    expect((await get(`/v5/shops/${shopUid}`)).status).toBe(404)

    // All four are on the feed, in the order they happened.
    const feed = await drain((update.items[0]?.id as number) - 1, { pageSize: '2' })
    expect(feed.items.map((i) => [i.level, i.type, i.key])).toEqual([
      ['shop', 'update', shopUid],
      ['merchant', 'update', merchantUid],
      ['handle', 'remap', handle],
      ['shop', 'delete', shopUid],
    ])
  })

  it('with invalidationShape ids-only each batch holds only ids, the same ids and paging as the full shape', async () => {
    const idsOnly = await startEnrichmentSim({ seed: 23, shops: 1_000, merchants: 100, invalidationShape: 'ids-only' })
    try {
      const idsToken = await token(idsOnly)
      const { items } = await admin<{ items: Item[] }>(idsOnly, 'POST', '/__admin/mutations', { kind: 'random', count: 30 })
      const res = await call(idsOnly, { path: '/v5/invalidations', query: { fromId: '0', pageSize: '1000', level: 'shop,merchant' }, headers: bearer(idsToken) })
      expect(res.status).toBe(200)
      const body = res.body as { data: { currentTime: string; batches: Record<string, unknown>[] }; paging: Page['paging'] }
      expect(body.data.batches.length).toBeGreaterThan(0)
      for (const batch of body.data.batches) expect(Object.keys(batch)).toEqual(['ids'])
      // Levels still filter: the handle items are not among the ids.
      expect(body.data.batches.flatMap((b) => b.ids as number[])).toEqual(items.filter((i) => i.level !== 'handle').map((i) => i.id))
      expect(body.paging).toMatchObject({ lastId: items.at(-1)?.id, hasMore: false })
    } finally {
      await idsOnly.close()
    }
  })

  it('the background process keeps changing data over time', async () => {
    const busy = await startEnrichmentSim({ seed: 22, shops: 2_000, merchants: 200, mutationsPerMinute: 6_000 })
    try {
      const busyToken = await token(busy)
      const lastId = await waitFor(
        'five background changes on the feed',
        async () => {
          const res = await call(busy, { path: '/v5/invalidations', query: { pageSize: '1000' }, headers: bearer(busyToken) })
          const id = (res.body as Page).paging.lastId
          return id >= 5 ? id : undefined
        },
        { timeoutMs: 15_000, intervalMs: 50 },
      )
      expect(lastId).toBeGreaterThanOrEqual(5)
    } finally {
      await busy.close()
    }
  })
})
