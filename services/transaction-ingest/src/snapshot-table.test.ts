import { describe, expect, it } from 'vitest'
import { avroSchema, exampleMerchant, exampleShop, type Shop } from '@tep/schemas'
import {
  createMerchantTables,
  MAX_AGE_WITHOUT_INVALIDATIONS_MS,
  merchantTablesTransferables,
} from './snapshot-table.ts'

const DAY = 24 * 3_600_000

function shop(uid: string, fetchedAt: number, overrides: Partial<Shop> = {}): Shop {
  return { ...exampleShop(), uid, fetchedAt, ...overrides }
}

describe('shop and merchant tables', () => {
  it('round-trips every field of random Shop and Merchant values exactly', () => {
    const tables = createMerchantTables({ invalidationsEnabled: true })
    const shopType = avroSchema('Shop').type
    const merchantType = avroSchema('Merchant').type
    for (let i = 0; i < 300; i++) {
      // avsc's random values cover nulls, empty arrays/maps and every branch over many draws.
      const s = { ...(shopType.random() as unknown as Shop), uid: `s${i}`, fetchedAt: 1_700_000_000_000 + i }
      tables.shops.applyFromTopic(s.uid, s)
      expect(shopType.toBuffer(tables.shops.get(s.uid))).toEqual(shopType.toBuffer(s))
      const m = {
        ...(merchantType.random() as unknown as ReturnType<typeof exampleMerchant>),
        uid: `m${i}@cz`,
        fetchedAt: 1_700_000_000_000 + i,
      }
      tables.merchants.applyFromTopic(m.uid, m)
      expect(tables.merchants.get(m.uid)).toEqual(m)
    }
    expect(tables.shops.size).toBe(300)
  })

  it('gives what get gives as Avro bytes (getAvro): topic entries, API reads over them, deletions and the age limit', () => {
    let now = 1_700_000_000_000
    const tables = createMerchantTables({ invalidationsEnabled: false, now: () => now })
    const shopType = avroSchema('Shop').type
    const merchantType = avroSchema('Merchant').type
    for (let i = 0; i < 200; i++) {
      const s = { ...(shopType.random() as unknown as Shop), uid: `s${i}`, fetchedAt: now - i }
      tables.shops.applyFromTopic(s.uid, s)
      expect(tables.shops.getAvro(s.uid)).toEqual({ avro: shopType.toBuffer(s), captured: s.merchantUid })
      const m = { ...(merchantType.random() as unknown as ReturnType<typeof exampleMerchant>), uid: `m${i}@cz`, fetchedAt: now }
      tables.merchants.applyFromTopic(m.uid, m)
      expect(tables.merchants.getAvro(m.uid)).toEqual({ avro: merchantType.toBuffer(m), captured: null })
    }
    // An API read newer than the topic's answers first; one the API says is gone is no hit.
    const fresh = shop('s1', now + 5, { merchantUid: 'm-api@cz', url: 'https://api.example/s1' })
    expect(tables.shops.putFetched(fresh)).toBe(true)
    expect(tables.shops.getAvro('s1')).toEqual({ avro: shopType.toBuffer(fresh), captured: 'm-api@cz' })
    tables.shops.delete('s2')
    expect(tables.shops.getAvro('s2')).toBeUndefined()
    expect(tables.shops.getAvro('nope')).toBeUndefined()
    // Without invalidations an entry older than the limit is a miss, as for get.
    now += MAX_AGE_WITHOUT_INVALIDATIONS_MS + 100
    expect(tables.shops.get('s150')).toBeUndefined()
    expect(tables.shops.getAvro('s150')).toBeUndefined()
    const later = shop('s150', now, { merchantUid: null })
    expect(tables.shops.putFetched(later)).toBe(true)
    expect(tables.shops.getAvro('s150')).toEqual({ avro: shopType.toBuffer(later), captured: null })
  })

  it('keeps the bytes getAvro gave unchanged while later hits fill and leave its slabs (views, not copies)', () => {
    const tables = createMerchantTables({ invalidationsEnabled: true })
    const shopType = avroSchema('Shop').type
    const expected: Buffer[] = []
    for (let i = 0; i < 400; i++) {
      // Long random strings: some entries near the slab's minimum room, so a write also grows a slab.
      const s = { ...(shopType.random() as unknown as Shop), uid: `s${i}`, fetchedAt: 1_700_000_000_000 + i }
      if (i % 50 === 7) s.url = 'x'.repeat(6_000 + i)
      tables.shops.applyFromTopic(s.uid, s)
      expected.push(shopType.toBuffer(s))
    }
    const held = []
    // Hits and misses interleaved, each entry twice: every view is checked after all the others were written.
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < 400; i++) {
        held.push({ i, avro: tables.shops.getAvro(`s${i}`)!.avro })
        expect(tables.shops.getAvro(`absent${i}`)).toBeUndefined()
      }
    for (const h of held) expect(h.avro).toEqual(expected[h.i])
  })

  it('deletes an entry on a tombstone', () => {
    const tables = createMerchantTables({ invalidationsEnabled: true })
    tables.shops.applyFromTopic('s1', shop('s1', 1))
    tables.shops.applyFromTopic('s1', null)
    expect(tables.shops.get('s1')).toBeUndefined()
    expect(tables.shops.size).toBe(0)
  })

  it('applies topic records in order even when older, but never lets an API read replace newer data', () => {
    const tables = createMerchantTables({ invalidationsEnabled: true })
    tables.shops.applyFromTopic('s1', shop('s1', 2000, { url: 'https://new.example' }))
    expect(tables.shops.putFetched(shop('s1', 1000, { url: 'https://old.example' }))).toBe(false)
    expect(tables.shops.get('s1')?.url).toBe('https://new.example')
    expect(tables.shops.putFetched(shop('s1', 3000, { url: 'https://newest.example' }))).toBe(true)
    expect(tables.shops.get('s1')?.url).toBe('https://newest.example')
    // The refresher is the single writer: its record wins even if its fetchedAt is older.
    tables.shops.applyFromTopic('s1', shop('s1', 2500, { url: 'https://refresher.example' }))
    expect(tables.shops.get('s1')?.url).toBe('https://refresher.example')
  })

  it('keeps API reads apart from the topic table until a topic record for the same uid replaces them', () => {
    const tables = createMerchantTables({ invalidationsEnabled: true })
    tables.shops.applyFromTopic('t1', shop('t1', 1000, { url: 'https://topic.example/1' }))
    tables.shops.applyFromTopic('t2', shop('t2', 1000))
    expect(tables.shops.putFetched(shop('t1', 2000, { url: 'https://api.example/1' }))).toBe(true)
    expect(tables.shops.putFetched(shop('a1', 2000))).toBe(true)
    tables.shops.delete('t2')
    tables.shops.delete('never-there')
    expect(tables.shops.get('t1')?.url).toBe('https://api.example/1')
    expect(tables.shops.get('t2')).toBeUndefined()
    expect(tables.shops.fetchedAtOf('t2')).toBeUndefined()
    expect(tables.shops.size).toBe(2)
    // What a checkpoint holds: the topic's view only.
    const topicOnly = createMerchantTables({ invalidationsEnabled: true })
    topicOnly.restoreState(tables.topicState())
    expect(topicOnly.shops.get('t1')?.url).toBe('https://topic.example/1')
    expect(topicOnly.shops.get('t2')?.uid).toBe('t2')
    expect(topicOnly.shops.get('a1')).toBeUndefined()
    // The refresher stored what we fetched (or a tombstone): the topic answers again.
    tables.shops.applyFromTopic('a1', shop('a1', 2000, { url: 'https://refresher.example/a1' }))
    tables.shops.applyFromTopic('t2', null)
    tables.shops.applyFromTopic('t1', shop('t1', 1500, { url: 'https://refresher.example/1' }))
    expect(tables.shops.get('a1')?.url).toBe('https://refresher.example/a1')
    expect(tables.shops.get('t1')?.url).toBe('https://refresher.example/1')
    expect(tables.shops.size).toBe(2)
    expect(tables.shops.putFetched(shop('t2', 3000))).toBe(true)
    expect(tables.shops.size).toBe(3)
  })

  it('treats entries older than 7 days as misses only when invalidations are off', () => {
    let now = 100 * DAY
    const off = createMerchantTables({ invalidationsEnabled: false, now: () => now })
    const on = createMerchantTables({ invalidationsEnabled: true, now: () => now })
    for (const t of [off, on]) {
      t.shops.applyFromTopic('fresh', shop('fresh', now - MAX_AGE_WITHOUT_INVALIDATIONS_MS))
      t.shops.applyFromTopic('stale', shop('stale', now - MAX_AGE_WITHOUT_INVALIDATIONS_MS - 1))
    }
    expect(off.shops.get('fresh')).toBeDefined()
    expect(off.shops.get('stale')).toBeUndefined()
    expect(off.shops.fetchedAtOf('stale')).toBe(now - MAX_AGE_WITHOUT_INVALIDATIONS_MS - 1)
    expect(on.shops.get('stale')).toBeDefined()
    now += 1
    expect(off.shops.get('fresh')).toBeUndefined()
  })

  it('hands tables and string pools over to other tables that decode and extend them identically', () => {
    const shopType = avroSchema('Shop').type
    const loader = createMerchantTables({ invalidationsEnabled: true })
    const shops: Shop[] = []
    for (let i = 0; i < 200; i++) {
      // A few categories and tags repeat, so pooled ids are in use on both sides of the hand-over.
      const s = shop(`s${i}`, 1_700_000_000_000 + i, {
        category: { name: `category ${i % 7}`, logo: null },
        tags: [`tag${i % 3}`],
        url: `https://chain.example/stores/${i}`,
      })
      shops.push(s)
      loader.shops.applyFromTopic(s.uid, s)
    }
    loader.merchants.applyFromTopic('m1@cz', { ...exampleMerchant(), uid: 'm1@cz' })
    const state = loader.exportState()
    const moved = structuredClone(state, { transfer: merchantTablesTransferables(state) })
    expect(loader.shops.size).toBe(0)

    const serving = createMerchantTables({ invalidationsEnabled: true })
    serving.restoreState([moved])
    expect(serving.shops.size).toBe(200)
    expect(serving.pooledStrings()).toBe(Object.values(moved.pools).reduce((n, v) => n + v.length, 0))
    for (const s of shops) expect(shopType.toBuffer(serving.shops.get(s.uid))).toEqual(shopType.toBuffer(s))
    expect(serving.merchants.get('m1@cz')?.uid).toBe('m1@cz')
    // New entries reuse the pooled ids and add new ones after the restored ones.
    const later = shop('s-new', 1_800_000_000_000, { category: { name: 'category 3', logo: null }, tags: ['fresh', 'tag1'] })
    serving.shops.applyFromTopic(later.uid, later)
    expect(shopType.toBuffer(serving.shops.get(later.uid))).toEqual(shopType.toBuffer(later))
    expect(shopType.toBuffer(serving.shops.get('s3'))).toEqual(shopType.toBuffer(shops[3]))
    expect(() => serving.restoreState([moved])).toThrow(/only be restored into empty tables/)
  })
})
