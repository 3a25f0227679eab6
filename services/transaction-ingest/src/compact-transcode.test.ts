import avro from 'avsc'
import { describe, expect, it } from 'vitest'
import { avroSchema, exampleMerchant, exampleShop, type Merchant, type Shop } from '@tep/schemas'
import { createCompactCodec, StringPools, Writer, type CompactCodecOptions } from './compact-codec.ts'

/**
 * The table loader's fast path (Avro bytes → compact bytes, no object) must
 * write exactly what the avsc path (Avro bytes → object → compact bytes)
 * writes, pools included: two codecs with their own pools, fed the same
 * records, one by `encode`, the other by `transcode`, must agree byte for byte.
 */
function pair<T>(type: avro.Type, options: CompactCodecOptions) {
  const viaObject = createCompactCodec<T>(type, new StringPools(), options)
  const viaBytes = createCompactCodec<T>(type, new StringPools(), options)
  const w1 = new Writer(16)
  const w2 = new Writer(16)
  return (value: T, avroBytes: Buffer = type.toBuffer(value)) => {
    // The avsc path as the loader runs it: the object avsc decodes from the bytes, encoded.
    w1.reset()
    viaObject.encode(w1, type.fromBuffer(avroBytes) as T)
    w2.reset()
    const lead = viaBytes.transcode(w2, avroBytes, 0)
    expect(w2.buf.subarray(0, w2.pos)).toEqual(w1.buf.subarray(0, w1.pos))
    const key = avroBytes.toString('utf8', viaBytes.keyStart, viaBytes.keyStart + viaBytes.keyLength)
    return { lead, key, decoded: viaBytes.decode(Buffer.from(w2.buf.subarray(0, w2.pos)), 0, key) }
  }
}

const SHOP_OPTIONS: CompactCodecOptions = {
  keyField: 'uid',
  leadingLong: 'fetchedAt',
  inlineStrings: ['location.address.street', 'googlePlaceId'],
  // Small budgets: the pools fill up and values go inline or as pooled URL prefixes.
  poolBudgetPerPath: 8,
  poolBudgets: { merchantUid: 20 },
}

describe('transcoding Avro bytes straight into the compact table encoding', () => {
  it('writes what encoding the decoded object writes, for random shops and merchants (nulls, unions, empty arrays and maps)', () => {
    const shopType = avroSchema('Shop').type
    const merchantType = avroSchema('Merchant').type
    const shops = pair<Shop>(shopType, SHOP_OPTIONS)
    const merchants = pair<Merchant>(merchantType, { keyField: 'uid', leadingLong: 'fetchedAt', inlineStrings: ['name'], poolBudgetPerPath: 5 })
    for (let i = 0; i < 500; i++) {
      const s = { ...(shopType.random() as unknown as Shop), uid: `s${i}`, fetchedAt: 1_700_000_000_000 + i }
      const out = shops(s)
      expect(out.key).toBe(s.uid)
      expect(out.lead).toBe(s.fetchedAt)
      expect(shopType.toBuffer(out.decoded)).toEqual(shopType.toBuffer(s))
      const m = { ...(merchantType.random() as unknown as Merchant), uid: `m${i}`, fetchedAt: (i - 250) * 1_000_003 }
      expect(merchants(m).decoded).toEqual(m)
    }
  })

  it('handles non-ASCII text, URL-like values past the pool budget, coordinates and large timestamps', () => {
    const shops = pair<Shop>(avroSchema('Shop').type, SHOP_OPTIONS)
    const base = exampleShop('s0')
    const cities = ['Plzeň', 'Ústí nad Labem', 'Kraków', '東京', 'Zürich 🏔', 'Brno', 'Praha', 'Ostrava', 'Olomouc', 'Liberec', 'Plzeň']
    for (let i = 0; i < 60; i++) {
      const s: Shop = {
        ...base,
        uid: `šop-${i}-✓`,
        fetchedAt: 2 ** 52 - i,
        url: `https://www.řetězec.cz/prodejny/${i}/detail-${i % 7}`,
        tags: [`tag-${i % 3}`, `štítek-${i % 11}`, ''],
        location: {
          address: { street: `Náměstí ${i}`, city: cities[i % cities.length]!, zip: null, country: 'CZ', areas: { kraj: `Kraj ${i % 4}`, 'okres ✓': `${i}` } },
          coordinates: i % 2 === 0 ? null : { ...base.location!.coordinates!, lat: 49.7384 + i * 1e-7, long: 13.3736 - i / 3 },
        },
      }
      const out = shops(s)
      expect(out.key).toBe(s.uid)
      expect(out.decoded).toEqual(s)
    }
    const m = { ...exampleMerchant('m1'), name: 'Potraviny „U Nádraží“ 🛒' }
    expect(pair<Merchant>(avroSchema('Merchant').type, { keyField: 'uid', leadingLong: 'fetchedAt' })(m).decoded).toEqual(m)
  })

  it('reads arrays and maps written in several blocks, with and without block sizes', () => {
    const type = avro.Type.forSchema({
      type: 'record',
      name: 'Blocks',
      fields: [
        { name: 'id', type: 'string' },
        { name: 'tags', type: { type: 'array', items: 'string' } },
        { name: 'areas', type: { type: 'map', values: 'int' } },
      ],
    })
    const check = pair<{ id: string; tags: string[]; areas: Record<string, number> }>(type, { keyField: 'id' })
    const value = { id: 'b1', tags: ['a', 'b', 'c'], areas: { x: 1, y: -2 } }
    const str = (s: string) => [s.length * 2, ...Buffer.from(s)]
    // tags: a block of 2 (count -2 with a byte size), then a block of 1, then the end; areas: two blocks of 1.
    const blocks = Buffer.from([
      ...str('b1'),
      3, 4, ...str('a'), ...str('b'), 2, ...str('c'), 0,
      2, ...str('x'), 2, 2, ...str('y'), 3, 0,
    ])
    expect(type.fromBuffer(blocks)).toEqual(value)
    expect(check(value, blocks).decoded).toEqual(value)
  })

  it('refuses bytes that are not a value of the schema', () => {
    const type = avroSchema('Merchant').type
    const codec = createCompactCodec<Merchant>(type, new StringPools(), { keyField: 'uid', leadingLong: 'fetchedAt' })
    const good = type.toBuffer(exampleMerchant('m1'))
    const w = new Writer(16)
    expect(() => codec.transcode(w, good.subarray(0, good.length - 3), 0)).toThrow(RangeError)
    expect(() => codec.transcode(w, Buffer.concat([good, Buffer.from([0])]), 0)).toThrow(/after its end/)
  })
})
