import { describe, expect, it } from 'vitest'
import { EnrichmentNotFoundError, EnrichmentServerError } from '@tep/enrichment-client'
import { avroSchema, exampleMerchant, exampleShop } from '@tep/schemas'
import { SystemicLookupError } from './errors.ts'
import { MerchantDetails } from './merchant-details.ts'
import { createMerchantTables } from './snapshot-table.ts'
import { FakeEnrichment } from './test-fakes.ts'

const NOW = 1_800_000_000_000

function setup(options: { invalidationsEnabled?: boolean; tableHitsAsAvro?: boolean } = {}) {
  let now = NOW
  const tables = createMerchantTables({
    invalidationsEnabled: options.invalidationsEnabled ?? true,
    now: () => now,
  })
  const api = new FakeEnrichment()
  api.shop = async (uid) => ({
    uid,
    merchantUid: 'm1@cz',
    type: 'bricks',
    location: { address: { city: 'Praha' } },
  })
  api.merchant = async (uid) => ({ uid, name: 'ACME', category: { name: 'Groceries' } })
  const details = new MerchantDetails({
    tables,
    client: api,
    instanceId: 'test-1',
    now: () => now,
    republishAfterMs: 30_000,
    tableHitsAsAvro: options.tableHitsAsAvro ?? false,
  })
  return { tables, api, details, advance: (ms: number) => (now += ms) }
}

/** A promise the test resolves by hand, to hold API answers while more records arrive. */
function gate<T>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void
  const promise = new Promise<T>((resolve) => (open = resolve))
  return { promise, open }
}

describe('MerchantDetails', () => {
  it('answers from the table without calling the API', async () => {
    const { tables, api, details } = setup()
    tables.shops.applyFromTopic('s1', { ...exampleShop(), uid: 's1', merchantUid: 'm1@cz', fetchedAt: NOW })
    tables.merchants.applyFromTopic('m1@cz', { ...exampleMerchant(), uid: 'm1@cz', fetchedAt: NOW })
    const resolved = await details.resolve('s1')
    expect(api.calls).toEqual([])
    expect(resolved).toMatchObject({
      shopSource: 'TABLE',
      merchantSource: 'TABLE',
      merchantUid: 'm1@cz',
      fetched: [],
    })
  })

  it('with tableHitsAsAvro gives table hits as the snapshots\' Avro bytes, and misses as objects', async () => {
    const { tables, api, details } = setup({ tableHitsAsAvro: true })
    const shop = { ...exampleShop(), uid: 's1', merchantUid: 'm1@cz', fetchedAt: NOW }
    const merchant = { ...exampleMerchant(), uid: 'm1@cz', fetchedAt: NOW }
    tables.shops.applyFromTopic('s1', shop)
    tables.merchants.applyFromTopic('m1@cz', merchant)
    expect(await details.resolve('s1')).toEqual({
      shop: null,
      merchant: null,
      shopAvro: avroSchema('Shop').type.toBuffer(shop),
      merchantAvro: avroSchema('Merchant').type.toBuffer(merchant),
      merchantUid: 'm1@cz',
      shopSource: 'TABLE',
      merchantSource: 'TABLE',
      fetched: [],
    })
    // The shop from the table names a merchant the table lacks: that one comes from the API, as an object.
    tables.shops.applyFromTopic('s2', { ...shop, uid: 's2', merchantUid: 'm2@cz' })
    const mixed = await details.resolve('s2')
    expect(api.calls).toEqual([{ op: 'getMerchant', arg: 'm2@cz' }])
    expect(mixed.shopAvro).toEqual(avroSchema('Shop').type.toBuffer({ ...shop, uid: 's2', merchantUid: 'm2@cz' }))
    expect(mixed).toMatchObject({ shop: null, merchant: { uid: 'm2@cz', name: 'ACME' }, merchantSource: 'API', merchantUid: 'm2@cz' })
    expect(mixed.merchantAvro).toBeUndefined()
    // A shop without a merchant in the table.
    tables.shops.applyFromTopic('s3', { ...shop, uid: 's3', merchantUid: null })
    expect(await details.resolve('s3')).toMatchObject({ merchant: null, merchantUid: null, merchantSource: null })
  })

  it('on a miss sends ONE request per uid however many records wait, and every waiter carries the fetched snapshot', async () => {
    const { api, details, tables } = setup()
    const shopGate = gate<void>()
    const shopAnswer = api.shop
    api.shop = async (uid) => {
      await shopGate.promise
      return shopAnswer(uid)
    }
    const waiting = Array.from({ length: 50 }, () => details.resolve('s1'))
    shopGate.open()
    const results = await Promise.all(waiting)
    expect(api.count('getShop')).toBe(1)
    expect(api.count('getMerchant')).toBe(1)
    for (const r of results) {
      expect(r.shop).toMatchObject({
        uid: 's1',
        merchantUid: 'm1@cz',
        type: 'bricks',
        fetchedAt: NOW,
        url: null,
      })
      expect(r.merchant).toMatchObject({
        uid: 'm1@cz',
        name: 'ACME',
        categoryName: 'Groceries',
        fetchedAt: NOW,
      })
      expect(r.shopSource).toBe('API')
      expect(r.fetched.map((f) => `${f.entityType}:${f.uid}:${f.fetchedBy}`)).toEqual([
        'SHOP:s1:test-1',
        'MERCHANT:m1@cz:test-1',
      ])
    }
    // The fetched data is in the local table now: the next record hits it and carries nothing.
    expect(tables.shops.get('s1')).toBeDefined()
    const next = await details.resolve('s1')
    expect(next).toMatchObject({ shopSource: 'TABLE', merchantSource: 'TABLE', fetched: [] })
    expect(api.count('getShop')).toBe(1)
  })

  it('hands an unconfirmed fetch over again after the republish interval, and not once the topic confirmed it', async () => {
    const { details, advance } = setup()
    await details.resolve('s1')
    advance(29_999)
    expect((await details.resolve('s1')).fetched).toEqual([])
    advance(1)
    expect((await details.resolve('s1')).fetched.map((f) => f.uid)).toEqual(['s1', 'm1@cz'])
    expect((await details.resolve('s1')).fetched).toEqual([])
    details.confirm('SHOP', 's1', NOW)
    details.confirm('MERCHANT', 'm1@cz', NOW + 5)
    advance(60_000)
    expect((await details.resolve('s1')).fetched).toEqual([])
    expect(details.unconfirmed).toBe(0)
  })

  it('a shop the API no longer has yields no snapshot and a notFound event for the refresher', async () => {
    const { api, details } = setup()
    api.shop = async () => {
      throw new EnrichmentNotFoundError('gone', {
        operation: 'enrichment.getShop',
        status: 404,
        apiError: { code: 'SHOP_NOT_FOUND', message: 'no shop' },
      })
    }
    const resolved = await details.resolve('s404')
    expect(resolved).toMatchObject({ shop: null, merchant: null, merchantUid: null, shopSource: null })
    expect(resolved.fetched).toEqual([
      { entityType: 'SHOP', uid: 's404', shop: null, merchant: null, notFound: true, fetchedBy: 'test-1' },
    ])
  })

  it('a 404 for an unknown route (wrong base URL) and 5xx are systemic', async () => {
    const { api, details } = setup()
    api.shop = async () => {
      throw new EnrichmentNotFoundError('no route', {
        operation: 'enrichment.getShop',
        status: 404,
        apiError: { code: 'ROUTE_NOT_FOUND', message: 'unknown path' },
      })
    }
    await expect(details.resolve('s1')).rejects.toBeInstanceOf(SystemicLookupError)
    api.shop = async () => {
      throw new EnrichmentServerError('down', { operation: 'enrichment.getShop', status: 500 })
    }
    await expect(details.resolve('s1')).rejects.toMatchObject({
      code: 'ENRICHMENT_SERVER_ERROR',
      retriable: true,
    })
  })

  it('uses details that came with a complete lookup without reading the API, storing and handing over only new ones', async () => {
    const { api, details, tables } = setup()
    const provided = {
      shop: { uid: 's9', merchantUid: 'm9@cz', url: 'https://fresh.example' },
      merchant: { uid: 'm9@cz', name: 'Fresh' },
    }
    const first = await details.resolve('s9', provided)
    expect(api.calls).toEqual([])
    expect(first).toMatchObject({
      shopSource: 'API',
      merchantSource: 'API',
      shop: { url: 'https://fresh.example' },
      merchant: { name: 'Fresh' },
    })
    expect(first.fetched.map((f) => `${f.entityType}:${f.uid}`)).toEqual(['SHOP:s9', 'MERCHANT:m9@cz'])
    expect(tables.shops.get('s9')?.url).toBe('https://fresh.example')
    // Known now: the next complete answer is used as it is, nothing to hand over.
    const again = await details.resolve('s9', {
      ...provided,
      shop: { ...provided.shop, url: 'https://fresher.example' },
    })
    expect(again.shop?.url).toBe('https://fresher.example')
    expect(again.fetched).toEqual([])
    // A complete answer without the merchant falls back to the table.
    const noMerchant = await details.resolve('s9', { shop: provided.shop })
    expect(noMerchant).toMatchObject({ merchantSource: 'TABLE', merchant: { name: 'Fresh' } })
  })

  it('reports the table cold while lookups miss it and warm once they hit', async () => {
    const { details, tables } = setup()
    expect(details.tableIsCold()).toBe(true)
    for (let i = 0; i < 5; i++) await details.resolve(`s${i}`)
    expect(details.tableIsCold()).toBe(true)
    for (let i = 0; i < 200; i++) await details.resolve(`s${i % 5}`)
    expect(details.tableIsCold()).toBe(false)
    expect(tables.shops.size).toBe(5)
  })

  it('with invalidations off, re-fetches entries older than 7 days instead of using them', async () => {
    const { tables, api, details } = setup({ invalidationsEnabled: false })
    const eightDays = 8 * 24 * 3_600_000
    tables.shops.applyFromTopic('s1', {
      ...exampleShop(),
      uid: 's1',
      merchantUid: 'm1@cz',
      fetchedAt: NOW - eightDays,
    })
    tables.merchants.applyFromTopic('m1@cz', { ...exampleMerchant(), uid: 'm1@cz', fetchedAt: NOW - 1000 })
    const resolved = await details.resolve('s1')
    expect(api.count('getShop')).toBe(1)
    expect(api.count('getMerchant')).toBe(0)
    expect(resolved).toMatchObject({ shopSource: 'API', merchantSource: 'TABLE' })
    expect(resolved.shop?.fetchedAt).toBe(NOW)
    expect(tables.shops.get('s1')?.fetchedAt).toBe(NOW)
  })
})
