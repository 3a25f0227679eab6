import { avroSchema } from '@tep/schemas'
import { describe, expect, it } from 'vitest'
import { merchantSnapshotData, shopSnapshotData } from './event-snapshots.ts'
import { parseMerchant, parseShop } from './entity-parsing.ts'
import { parseCompleteFindResult } from './find-parsing.ts'
import type { ReadContext } from './tolerant-reading.ts'

/**
 * Rule 6 of the interface description: "A response omits any value the service
 * does not have. Any response value may therefore be absent." For every member
 * of the modelled shop, merchant and complete find answers, an answer without it
 * (or with it null) still parses into a snapshot the Avro contract accepts, with
 * null where the value was: a per-record outcome, never a contract breach that
 * would pause the pipeline.
 */
const ctx: ReadContext = { operation: 'test', method: 'GET', url: 'http://x/v5/shops/s1', status: 200 }

const fullShop = () => ({
  uid: 's1',
  type: 'bricks',
  merchantUid: 'm1',
  tags: ['atm'],
  category: { name: 'Groceries', logo: 'https://logos.example/groceries.png' },
  location: {
    address: { street: 'Vodičkova 1', city: 'Praha', zip: '11000', country: 'CZ', areas: { '20': 'Praha' } },
    coordinates: { type: 'rooftop', lat: 50.08, long: 14.42 },
  },
  url: 'https://shop.example',
  googlePlaceId: 'ChIJ123',
})
const fullMerchant = () => ({
  uid: 'm1',
  name: 'Albert',
  logo: 'https://logos.example/albert.png',
  url: 'https://albert.example',
  category: { name: 'Groceries', logo: 'https://logos.example/groceries.png' },
  tags: ['retail'],
})

/** Every member path of an object, nested ones included (`location.address.city`). */
function paths(value: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(value).flatMap(([k, v]) => {
    const path = `${prefix}${k}`
    const nested =
      typeof v === 'object' && v !== null && !Array.isArray(v) && k !== 'areas'
        ? paths(v as Record<string, unknown>, `${path}.`)
        : []
    return [path, ...nested]
  })
}

function without<T extends Record<string, unknown>>(value: T, path: string, replacement?: null): T {
  const copy = structuredClone(value)
  const keys = path.split('.')
  let parent = copy as Record<string, unknown>
  for (const k of keys.slice(0, -1)) parent = parent[k] as Record<string, unknown>
  if (replacement === null) parent[keys.at(-1)!] = null
  else delete parent[keys.at(-1)!]
  return copy
}

const stamps = { fetchedAt: 1_700_000_000_000, invalidationItemId: null }

describe('absent values in shop and merchant answers (rule 6)', () => {
  it.each(paths(fullShop()).flatMap((p) => [[p, 'absent'] as const, [p, 'null'] as const]))(
    'a shop answer with %s %s is a usable snapshot',
    (path, how) => {
      const answer = without(fullShop(), path, how === 'null' ? null : undefined)
      const shop = parseShop(ctx, answer, 'body', 's1')
      const snapshot = { ...shopSnapshotData(shop, 's1'), ...stamps }
      expect(avroSchema('Shop').type.isValid(snapshot)).toBe(true)
      const full = shopSnapshotData(parseShop(ctx, fullShop()), 's1')
      expect(snapshot.uid).toBe('s1')
      // What was there is kept; what was not is null, never invented.
      if (path !== 'uid') expect(JSON.stringify(snapshot)).not.toEqual(JSON.stringify({ ...full, ...stamps }))
      // The snapshot has the answer's member names and nesting: null there, equal elsewhere.
      expect(without(snapshot, path, null)).toEqual(without({ ...full, ...stamps }, path, null))
    },
  )

  it.each(paths(fullMerchant()).flatMap((p) => [[p, 'absent'] as const, [p, 'null'] as const]))(
    'a merchant answer with %s %s is a usable snapshot',
    (path, how) => {
      const answer = without(fullMerchant(), path, how === 'null' ? null : undefined)
      const merchant = parseMerchant(ctx, answer, 'body', 'm1')
      const snapshot = { ...merchantSnapshotData(merchant, 'm1'), ...stamps }
      expect(avroSchema('Merchant').type.isValid(snapshot)).toBe(true)
      expect(snapshot.uid).toBe('m1')
      const full = merchantSnapshotData(parseMerchant(ctx, fullMerchant()), 'm1')
      const mapped = path.startsWith('category') ? 'categoryName' : path
      if (path in full || path.startsWith('category'))
        expect({ ...snapshot, [mapped]: null }).toEqual({ ...full, ...stamps, [mapped]: null })
      else expect(snapshot).toEqual({ ...full, ...stamps })
    },
  )

  it.each(['handle', 'shop.type', 'merchant', 'merchant.uid', 'merchant.name', 'shop.merchantUid'])(
    'a complete find answer without %s is still found, with what is known',
    (path) => {
      const answer = without({ result: 'found', handle: 'h1', shop: fullShop(), merchant: fullMerchant() }, path)
      const result = parseCompleteFindResult(ctx, answer)
      expect(result).toMatchObject({ status: 'found', shopUid: 's1' })
      if (result.status !== 'found') return
      expect(result.handle).toBe(path === 'handle' ? undefined : 'h1')
      if (path === 'merchant') expect(result.merchant).toBeUndefined()
      else expect(result.merchant).toMatchObject({ uid: 'm1' })
      // A merchant without uid is the shop's merchant.
      if (path === 'merchant.uid') expect(result.merchant?.uid).toBe('m1')
    },
  )

  it('a complete find answer whose merchant has no uid and whose shop names none leaves the merchant out', () => {
    const shop = without(fullShop(), 'merchantUid')
    const result = parseCompleteFindResult(ctx, {
      result: 'found',
      handle: 'h1',
      shop,
      merchant: without(fullMerchant(), 'uid'),
    })
    expect(result).toMatchObject({ status: 'found', shopUid: 's1', merchant: undefined })
  })

  it('a find answer whose shop has no uid is not found (nothing identifies the shop), a per-record outcome', () => {
    expect(parseCompleteFindResult(ctx, { result: 'found', handle: 'h1', shop: without(fullShop(), 'uid') })).toEqual({
      status: 'notFound',
      handle: 'h1',
    })
  })

  it('without a known uid an answer lacking uid is still a breach (nothing says which entity it is)', () => {
    expect(() => parseShop(ctx, without(fullShop(), 'uid'))).toThrow(/body.uid missing/)
    expect(() => parseMerchant(ctx, without(fullMerchant(), 'uid'))).toThrow(/body.uid missing/)
  })
})
