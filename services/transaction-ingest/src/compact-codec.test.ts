import { describe, expect, it } from 'vitest'
import { avroSchema, exampleShop, type Shop } from '@tep/schemas'
import { createCompactCodec, StringPools, Writer } from './compact-codec.ts'

function roundTrip(
  codec: ReturnType<typeof createCompactCodec<Shop>>,
  shop: Shop,
): { decoded: Shop; bytes: number } {
  const w = new Writer(16)
  codec.encode(w, shop)
  const copy = Buffer.from(w.buf.subarray(0, w.pos))
  return { decoded: codec.decode(copy, 0, shop.uid), bytes: w.pos }
}

describe('compact codec', () => {
  const type = avroSchema('Shop').type

  it('restores the key field and keeps nulls, empty strings, empty arrays and maps distinct', () => {
    const codec = createCompactCodec<Shop>(type, new StringPools(), {
      keyField: 'uid',
      leadingLong: 'fetchedAt',
    })
    const shop: Shop = {
      ...exampleShop('k1'),
      type: '',
      tags: [],
      url: null,
      location: {
        address: { street: '', city: null, zip: null, country: null, areas: {} },
        coordinates: null,
      },
    }
    const { decoded } = roundTrip(codec, shop)
    expect(decoded).toEqual(shop)
    expect(type.toBuffer(decoded)).toEqual(type.toBuffer(shop))
  })

  it('pools repeated values, stops pooling a path past its budget, and keeps URL prefixes pooled', () => {
    const pool = new StringPools()
    const codec = createCompactCodec<Shop>(type, pool, {
      keyField: 'uid',
      leadingLong: 'fetchedAt',
      poolBudgetPerPath: 3,
    })
    const sizes: number[] = []
    for (let i = 0; i < 50; i++) {
      const shop: Shop = {
        ...exampleShop(`s${i}`),
        url: `https://www.brand.example/stores/praha-${i}`,
        googlePlaceId: `place-${i}`,
      }
      const { decoded, bytes } = roundTrip(codec, shop)
      expect(decoded).toEqual(shop)
      sizes.push(bytes)
    }
    // Unique values stopped entering the pool once their paths used their budget.
    expect(pool.size).toBeLessThan(40)
    // Later entries are not bigger than earlier ones: the URL keeps its pooled prefix.
    expect(sizes[49]).toBeLessThanOrEqual((sizes[10] as number) + 1)
  })

  it('writes paths listed as inline without pooling them', () => {
    const pool = new StringPools()
    const codec = createCompactCodec<Shop>(type, pool, { keyField: 'uid', inlineStrings: ['googlePlaceId'] })
    roundTrip(codec, { ...exampleShop('a'), googlePlaceId: 'unique-place' })
    expect(pool.size).toBeGreaterThan(0)
    const placePool = pool.forPath('tep.events.v1.Shop:googlePlaceId')
    expect(placePool.size).toBe(0)
  })

  it('stores decimal coordinates compactly and any other double exactly', () => {
    const codec = createCompactCodec<Shop>(type, new StringPools(), { keyField: 'uid' })
    for (const [lat, long] of [
      [50.03876, 14.443882],
      [-33.8688197, 151.2092955],
      [0.1 + 0.2, Math.PI],
      [-0, 1e-12],
      [Number.MAX_VALUE, -179.9999999],
    ] as const) {
      const shop: Shop = {
        ...exampleShop('c'),
        location: { address: null, coordinates: { type: 'rooftop', lat, long } },
      }
      const { decoded } = roundTrip(codec, shop)
      expect(Object.is(decoded.location?.coordinates?.lat, lat)).toBe(true)
      expect(Object.is(decoded.location?.coordinates?.long, long)).toBe(true)
    }
  })

  it('refuses schemas it cannot encode faithfully', () => {
    const avroType = avroSchema('Shop').type
    expect(() => createCompactCodec(avroType, new StringPools(), { keyField: 'nope' })).toThrow(
      /key field nope/,
    )
    expect(() => createCompactCodec(avroType, new StringPools(), { leadingLong: 'url' })).toThrow(
      /leading field url/,
    )
  })
})
