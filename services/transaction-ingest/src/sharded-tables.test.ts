/**
 * Tables loaded by several loader processes: each process hands over a shard
 * (its tables and its own string pools, with ids that mean other strings than
 * the other shards' ids). The served tables answer as one table: every entry
 * decodes with its own shard's pools, a topic write moves a uid to the primary
 * shard, a tombstone removes it wherever it is, and a checkpoint keeps the shards.
 */
import { describe, expect, it } from 'vitest'
import { avroSchema, exampleMerchant, exampleShop, type Shop } from '@tep/schemas'
import { createMerchantTables, merchantTablesTransferables, type MerchantTables, type MerchantTablesState } from './snapshot-table.ts'

const shopType = avroSchema('Shop').type

function shop(uid: string, i: number, overrides: Partial<Shop> = {}): Shop {
  // Categories and tags repeat within a loader, in another first-seen order in each: pooled ids differ per shard.
  return { ...exampleShop(), uid, fetchedAt: 1_700_000_000_000 + i, category: { name: `category ${i % 7}`, logo: null }, tags: [`tag${i % 5}`], merchantUid: `m${i % 11}@cz`, ...overrides }
}

/** What one loader process hands over after reading its share (`skew` shifts which category and tag come first). */
function loaderShard(uids: string[], skew = 0): { state: MerchantTablesState; shops: Shop[] } {
  const loader = createMerchantTables({ invalidationsEnabled: true })
  const shops = uids.map((uid, i) => shop(uid, i + skew))
  for (const s of shops) loader.shops.applyFromTopic(s.uid, s)
  for (const uid of uids.slice(0, 3)) loader.merchants.applyFromTopic(`${uid}-m@cz`, { ...exampleMerchant(), uid: `${uid}-m@cz` })
  const state = loader.exportState()
  return { state: structuredClone(state, { transfer: merchantTablesTransferables(state) }), shops }
}

function sharded(): { tables: MerchantTables; shops: Shop[] } {
  const a = loaderShard(Array.from({ length: 120 }, (_, i) => `a${i}`))
  const b = loaderShard(Array.from({ length: 90 }, (_, i) => `b${i}`), 3)
  const empty = loaderShard([])
  const tables = createMerchantTables({ invalidationsEnabled: true })
  tables.restoreState([a.state, empty.state, b.state])
  return { tables, shops: [...a.shops, ...b.shops] }
}

const bytes = (s: Shop | undefined) => (s === undefined ? undefined : shopType.toBuffer(s))

describe('tables of a load by several loader processes', () => {
  it('answer every entry of every shard exactly, each decoded with its own shard\'s pools', () => {
    const { tables, shops } = sharded()
    expect(tables.shops.shards).toBe(2)
    expect(tables.shops.size).toBe(210)
    expect(tables.merchants.size).toBe(6)
    for (const s of shops) expect(bytes(tables.shops.get(s.uid))).toEqual(bytes(s))
    // Straight to Avro too, each with its own shard's pools, and the merchant uid beside the bytes.
    for (const s of shops) expect(tables.shops.getAvro(s.uid)).toEqual({ avro: bytes(s), captured: s.merchantUid })
    expect(tables.merchants.get('b2-m@cz')?.uid).toBe('b2-m@cz')
    expect(tables.shops.get('c1')).toBeUndefined()
  })

  it('move a uid to the primary shard on a topic write, and delete it from any shard on a tombstone', () => {
    const { tables } = sharded()
    const moved = shop('b5', 999, { url: 'https://refresher.example/b5', category: { name: 'a category no loader saw', logo: null } })
    tables.shops.applyFromTopic('b5', moved)
    expect(bytes(tables.shops.get('b5'))).toEqual(bytes(moved))
    expect(tables.shops.size).toBe(210)
    tables.shops.applyFromTopic('b6', null)
    tables.shops.applyFromTopic('a6', null)
    expect(tables.shops.get('b6')).toBeUndefined()
    expect(tables.shops.get('a6')).toBeUndefined()
    expect(tables.shops.size).toBe(208)
    // An API read of a uid of a secondary shard stays apart and gives way to the topic, as with one shard.
    expect(tables.shops.putFetched(shop('b7', 5_000, { url: 'https://api.example/b7' }))).toBe(true)
    expect(tables.shops.get('b7')?.url).toBe('https://api.example/b7')
    expect(tables.shops.size).toBe(208)
    tables.shops.delete('b8')
    expect(tables.shops.get('b8')).toBeUndefined()
    expect(tables.shops.size).toBe(207)
  })

  it('write every shard to a checkpoint state that restores into the same answers', () => {
    const { tables, shops } = sharded()
    tables.shops.applyFromTopic('b1', null)
    const restored = createMerchantTables({ invalidationsEnabled: true })
    const states = tables.topicState()
    expect(states).toHaveLength(2)
    restored.restoreState(structuredClone(states))
    expect(restored.shops.size).toBe(209)
    for (const s of shops) expect(bytes(restored.shops.get(s.uid))).toEqual(s.uid === 'b1' ? undefined : bytes(s))
    expect(() => tables.exportState()).toThrow(/one shard/)
  })
})
