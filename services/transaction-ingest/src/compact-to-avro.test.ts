import avro from 'avsc'
import { describe, expect, it } from 'vitest'
import { avroSchema, exampleMerchant, exampleShop, type Merchant, type Shop } from '@tep/schemas'
import { createCompactCodec, StringPools, Writer, type CompactCodecOptions } from './compact-codec.ts'

/**
 * The ingest's way out of the table (compact bytes → the Avro bytes the
 * enriched event embeds, no object) must write exactly what avsc writes for
 * the object `decode` gives: every stored value, whichever way its strings
 * were stored (pooled, inline, pooled URL prefix), its unions, arrays and maps.
 */
function check<T extends object>(type: avro.Type, options: CompactCodecOptions) {
  const codec = createCompactCodec<T>(type, new StringPools(), options)
  const w = new Writer(16)
  const out = new Writer(16)
  return (value: T, key: string) => {
    w.reset()
    codec.encode(w, value)
    const stored = Buffer.from(w.buf.subarray(0, w.pos))
    // Appends: what is before it stays.
    out.reset()
    out.byte(0xee)
    codec.toAvro(out, stored, 0, key)
    expect(out.buf[0]).toBe(0xee)
    const bytes = Buffer.from(out.buf.subarray(1, out.pos))
    expect(bytes).toEqual(type.toBuffer(codec.decode(stored, 0, key)))
    expect(bytes).toEqual(type.toBuffer(value))
    return codec
  }
}

const SHOP_OPTIONS: CompactCodecOptions = {
  keyField: 'uid',
  leadingLong: 'fetchedAt',
  inlineStrings: ['location.address.street', 'googlePlaceId'],
  // Small budgets: the pools fill up and values go inline or as pooled URL prefixes.
  poolBudgetPerPath: 8,
  poolBudgets: { merchantUid: 20 },
  capture: 'merchantUid',
}

describe('compact table bytes straight to Avro (CompactCodec.toAvro)', () => {
  it('writes the bytes avsc writes for the decoded value, for random shops and merchants', () => {
    const shopType = avroSchema('Shop').type
    const merchantType = avroSchema('Merchant').type
    const shops = check<Shop>(shopType, SHOP_OPTIONS)
    const merchants = check<Merchant>(merchantType, { keyField: 'uid', leadingLong: 'fetchedAt', inlineStrings: ['name'], poolBudgetPerPath: 5 })
    for (let i = 0; i < 500; i++) {
      const s = { ...(shopType.random() as unknown as Shop), uid: `s${i}`, fetchedAt: 1_700_000_000_000 + i }
      expect(shops(s, s.uid).captured).toBe(s.merchantUid)
      const m = { ...(merchantType.random() as unknown as Merchant), uid: `m${i}`, fetchedAt: (i - 250) * 1_000_003 }
      merchants(m, m.uid)
    }
  })

  it('handles non-ASCII and long text, URL-like values past the pool budget, nulls, empty arrays and maps', () => {
    const shops = check<Shop>(avroSchema('Shop').type, SHOP_OPTIONS)
    const base = exampleShop('s0')
    const cities = ['Plzeň', 'Ústí nad Labem', 'Kraków', '東京', 'Zürich 🏔', 'Brno', 'Praha', 'Ostrava', 'Olomouc', 'Liberec']
    for (let i = 0; i < 60; i++) {
      const s: Shop = {
        ...base,
        uid: `šop-${i}-✓`,
        fetchedAt: 2 ** 52 - i,
        merchantUid: i % 5 === 0 ? null : `merchant-${i}-${'m'.repeat(i)}`,
        url: `https://www.řetězec.cz/prodejny/${i}/detail-${i % 7}${'x'.repeat(i)}`,
        tags: i % 4 === 0 ? [] : [`tag-${i % 3}`, `štítek-${i % 11}`, ''],
        location: {
          address: { street: `Náměstí ${i} ${'ř'.repeat(i)}`, city: cities[i % cities.length]!, zip: null, country: 'CZ', areas: i % 3 === 0 ? {} : { kraj: `Kraj ${i % 4}`, 'okres ✓': `${i}` } },
          coordinates: i % 2 === 0 ? null : { ...base.location!.coordinates!, lat: 49.7384 + i * 1e-7, long: 13.3736 - i / 3 },
        },
      }
      expect(shops(s, s.uid).captured).toBe(s.merchantUid)
    }
    check<Merchant>(avroSchema('Merchant').type, { keyField: 'uid', leadingLong: 'fetchedAt' })(
      { ...exampleMerchant('m1'), name: 'Potraviny „U Nádraží“ 🛒' },
      'm1',
    )
  })

  it('writes every primitive Avro type it stores (int, long, float, double, boolean, enum) as avsc does', () => {
    const type = avro.Type.forSchema({
      type: 'record',
      name: 'Prims',
      fields: [
        { name: 'id', type: 'string' },
        { name: 'i', type: 'int' },
        { name: 'l', type: ['null', 'long'] },
        { name: 'f', type: 'float' },
        { name: 'd', type: 'double' },
        { name: 'b', type: 'boolean' },
        { name: 'e', type: { type: 'enum', name: 'E', symbols: ['A', 'B', 'C'] } },
        { name: 'n', type: 'null' },
        { name: 'ints', type: { type: 'map', values: { type: 'array', items: 'int' } } },
      ],
    })
    const prims = check<Record<string, unknown>>(type, { keyField: 'id' })
    for (let i = 0; i < 300; i++) prims({ ...(type.random() as unknown as Record<string, unknown>), id: `p${i}` }, `p${i}`)
    prims({ id: 'x', i: -(2 ** 31), l: -(2 ** 50), f: 1.5, d: -0, b: true, e: 'C', n: null, ints: { a: [2 ** 31 - 1, 0, -1] } }, 'x')
  })

  it('says which field it captures only for a string field', () => {
    expect(() => createCompactCodec(avroSchema('Shop').type, new StringPools(), { capture: 'fetchedAt' })).toThrow(/captured field fetchedAt/)
  })
})
