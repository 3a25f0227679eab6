import { PipelineError } from '@tep/errors'
import { exampleMerchant, exampleShop, type Shop } from '@tep/schemas'
import { describe, expect, it } from 'vitest'
import { EntityVersions } from './entity-versions.ts'
import { refreshBatch, type EntityFetcher, type RefreshContext } from './refresh-batch.ts'
import { fromInvalidation, type RefreshInput, type ShopData } from './refresh-input.ts'

const DAY = 86_400_000

function shopData(uid: string, url: string): ShopData {
  const { fetchedAt: _f, invalidationItemId: _i, ...rest } = exampleShop(uid)
  return { ...rest, url }
}

function setup(api: Record<string, ShopData | null | Error>, now = 1_000_000) {
  const calls: string[] = []
  const fetcher: EntityFetcher = {
    async shop(uid) {
      calls.push(`shop:${uid}`)
      const answer = api[uid]
      if (answer instanceof Error) throw answer
      return answer === undefined ? null : answer
    },
    async merchant(uid) {
      calls.push(`merchant:${uid}`)
      const { fetchedAt: _f, invalidationItemId: _i, ...rest } = exampleMerchant(uid)
      return rest
    },
  }
  const views = { shop: new EntityVersions(), merchant: new EntityVersions() }
  const clock = { now }
  const ctx: RefreshContext = {
    views,
    fetcher,
    now: () => clock.now,
    refreshAfterMs: 6 * DAY,
    concurrency: 4,
    isRecordScoped: (err) => err instanceof PipelineError && err.code === 'ENRICHMENT_BAD_REQUEST',
  }
  return { ctx, calls, views, clock }
}

const inv = (key: string, itemId: number, entity: 'shop' | 'merchant' = 'shop'): RefreshInput => ({
  kind: 'invalidation',
  entity,
  key,
  itemId,
  type: 'update',
  seenAt: 900_000,
})
const fetched = (shop: Shop | null, key: string, version: number): RefreshInput => ({
  kind: 'fetched',
  entity: 'shop',
  key,
  snapshot: shop,
  version,
})

describe('refreshBatch', () => {
  it('reports items without a key (the feed sent only ids) for the age rule and reads nothing for them', async () => {
    const { ctx, calls, views } = setup({ s1: shopData('s1', 'https://new.example') })
    views.shop.observeCommitted('s1', { version: 1, deleted: false })
    const unkeyed = fromInvalidation({
      itemId: 12,
      level: 'unknown',
      type: null,
      entityKey: '',
      seenAt: 900_000,
      feedCurrentTime: null,
    })
    const shopLevelUnkeyed = fromInvalidation({
      itemId: 13,
      level: 'shop',
      type: 'update',
      entityKey: '',
      seenAt: 900_001,
      feedCurrentTime: null,
    })
    const { outputs, stats } = await refreshBatch([unkeyed, shopLevelUnkeyed], ctx)
    expect(calls).toEqual([])
    expect(outputs).toEqual([])
    expect(stats.unkeyed).toEqual([
      { level: 'unknown', itemId: 12, seenAt: 900_000 },
      { level: 'shop', itemId: 13, seenAt: 900_001 },
    ])
  })

  it('an item of level unknown with a key re-reads it as a shop or a merchant, whichever the table holds', async () => {
    const { ctx, calls, views } = setup({ s1: shopData('s1', 'https://new.example') })
    views.shop.observeCommitted('s1', { version: 1, deleted: false })
    views.merchant.observeCommitted('m1', { version: 1, deleted: false })
    const either = (key: string, itemId: number) =>
      fromInvalidation({ itemId, level: 'unknown', type: null, entityKey: key, seenAt: 900_000, feedCurrentTime: null })
    expect(either('s1', 1).kind).toBe('invalidation-either')
    const { outputs, stats } = await refreshBatch([either('s1', 1), either('m1', 2), either('x9', 3)], ctx)
    expect(calls.sort()).toEqual(['merchant:m1', 'shop:s1'])
    expect(outputs.map((o) => [o.entity, o.key])).toEqual([
      ['shop', 's1'],
      ['merchant', 'm1'],
    ])
    expect(stats.skipped).toEqual([{ entity: 'none', reason: 'not-in-table', key: 'x9' }])
    // Neither table held x9: an in-flight ingest snapshot of it from before the item is refused later.
    expect(views.shop.floor('x9', 1_000_000)).toBe(900_000)
  })

  it('fetches each invalidated key once per batch and stamps the newest item id', async () => {
    const { ctx, calls, views } = setup({ s1: shopData('s1', 'https://new.example') })
    views.shop.observeCommitted('s1', { version: 1, deleted: false })
    const { outputs, stats } = await refreshBatch([inv('s1', 4), inv('s1', 9), inv('s1', 7)], ctx)
    expect(calls).toEqual(['shop:s1'])
    expect(outputs).toEqual([
      {
        entity: 'shop',
        key: 's1',
        value: expect.objectContaining({
          uid: 's1',
          url: 'https://new.example',
          fetchedAt: 1_000_000,
          invalidationItemId: 9,
        }),
      },
    ])
    expect(stats.refreshed.shop).toBe(1)
  })

  it('writes a tombstone when the API no longer has the entity', async () => {
    const { ctx, views } = setup({ gone: null })
    views.shop.observeCommitted('gone', { version: 1, deleted: false })
    const { outputs, stats } = await refreshBatch([inv('gone', 3)], ctx)
    expect(outputs).toEqual([{ entity: 'shop', key: 'gone', value: null }])
    expect(stats.tombstoned.shop).toBe(1)
    expect(views.shop.isLive('gone', 1_000_000)).toBe(false)
  })

  it('fetches nothing for keys the table does not hold, and refuses older ingest snapshots afterwards', async () => {
    const { ctx, calls } = setup({})
    const old = { ...exampleShop('s9'), fetchedAt: 800_000 }
    const { outputs, stats } = await refreshBatch([inv('s9', 5), fetched(old, 's9', old.fetchedAt)], ctx)
    expect(calls).toEqual([])
    expect(outputs).toEqual([])
    expect(stats.skipped.map((s) => s.reason)).toEqual(['not-in-table', 'stale'])
  })

  it('re-reads a key that an earlier record of the same batch made known', async () => {
    const { ctx, calls } = setup({ s9: shopData('s9', 'https://fresh.example') })
    const old = { ...exampleShop('s9'), fetchedAt: 800_000 }
    const { outputs } = await refreshBatch([fetched(old, 's9', old.fetchedAt), inv('s9', 5)], ctx)
    expect(calls).toEqual(['shop:s9'])
    expect(outputs).toHaveLength(1)
    expect(outputs[0]!.value).toMatchObject({ url: 'https://fresh.example', fetchedAt: 1_000_000 })
  })

  it('keeps the newest ingest snapshot: older ones are skipped, equal or newer ones written', async () => {
    const { ctx, views } = setup({})
    views.shop.observeCommitted('s1', { version: 500, deleted: false })
    const older = { ...exampleShop('s1'), fetchedAt: 400 }
    const same = { ...exampleShop('s1'), fetchedAt: 500 }
    const newer = { ...exampleShop('s1'), fetchedAt: 600, url: 'https://newer.example' }
    expect((await refreshBatch([fetched(older, 's1', 400)], ctx)).outputs).toEqual([])
    expect((await refreshBatch([fetched(same, 's1', 500)], ctx)).outputs).toHaveLength(1)
    const { outputs } = await refreshBatch([fetched(newer, 's1', 600), fetched(same, 's1', 500)], ctx)
    expect(outputs).toEqual([{ entity: 'shop', key: 's1', value: newer }])
    expect(views.shop.get('s1', 1_000_000)?.version).toBe(600)
  })

  it('lets a fresh API read win over an ingest snapshot stamped in the future by a skewed clock', async () => {
    const { ctx, views } = setup({ s1: shopData('s1', 'https://fresh.example') })
    views.shop.observeCommitted('s1', { version: 1, deleted: false })
    const future = { ...exampleShop('s1'), fetchedAt: 5_000_000 }
    const { outputs } = await refreshBatch([fetched(future, 's1', future.fetchedAt), inv('s1', 2)], ctx)
    expect(outputs).toHaveLength(1)
    expect(outputs[0]!.value).toMatchObject({ url: 'https://fresh.example' })
    expect(views.shop.get('s1', 1_000_000)?.version).toBe(5_000_000)
  })

  it('applies an ingest 404 as a tombstone only to entries the table holds', async () => {
    const { ctx, views } = setup({})
    views.shop.observeCommitted('s1', { version: 100, deleted: false })
    const { outputs } = await refreshBatch([fetched(null, 's1', 200), fetched(null, 'unknown', 200)], ctx)
    expect(outputs).toEqual([{ entity: 'shop', key: 's1', value: null }])
  })

  it('re-fetches sweep requests only for entries that are still old', async () => {
    const { ctx, calls, views, clock } = setup({ old: shopData('old', 'u'), young: shopData('young', 'u') })
    clock.now = 10 * DAY
    views.shop.observeCommitted('old', { version: 3 * DAY, deleted: false })
    views.shop.observeCommitted('young', { version: 9 * DAY, deleted: false })
    const expiry = (key: string): RefreshInput => ({
      kind: 'expiry',
      entity: 'shop',
      key,
      requestedAt: 10 * DAY,
    })
    const { outputs, stats } = await refreshBatch([expiry('old'), expiry('young'), expiry('missing')], ctx)
    expect(calls).toEqual(['shop:old'])
    expect(outputs[0]!.value).toMatchObject({ uid: 'old', invalidationItemId: null })
    expect(stats.skipped.map((s) => s.reason)).toEqual(['fresh', 'not-in-table'])
  })

  it('skips a key the API rejects (400) and fails the batch on systemic errors', async () => {
    const bad = new PipelineError('bad uid', { code: 'ENRICHMENT_BAD_REQUEST' })
    const down = new PipelineError('503', { code: 'ENRICHMENT_SERVER_ERROR', retriable: true })
    const { ctx, views } = setup({ bad, ok: shopData('ok', 'u') })
    views.shop.observeCommitted('bad', { version: 1, deleted: false })
    views.shop.observeCommitted('ok', { version: 1, deleted: false })
    const { outputs, stats } = await refreshBatch([inv('bad', 1), inv('ok', 2)], ctx)
    expect(outputs.map((o) => o.key)).toEqual(['ok'])
    expect(stats.skipped).toEqual([{ entity: 'shop', reason: 'rejected', key: 'bad' }])

    const second = setup({ down, ok: shopData('ok', 'u') })
    second.views.shop.observeCommitted('down', { version: 1, deleted: false })
    second.views.shop.observeCommitted('ok', { version: 1, deleted: false })
    await expect(refreshBatch([inv('down', 1), inv('ok', 2)], second.ctx)).rejects.toBe(down)
  })

  it('leaves handle-level items to the re-enrichment path', async () => {
    const { ctx, calls } = setup({})
    const { outputs, stats } = await refreshBatch(
      [{ kind: 'ignored', reason: 'handle-level', detail: 'h1' }],
      ctx,
    )
    expect(calls).toEqual([])
    expect(outputs).toEqual([])
    expect(stats.skipped).toEqual([{ entity: 'none', reason: 'handle-level', key: 'h1' }])
  })
})
