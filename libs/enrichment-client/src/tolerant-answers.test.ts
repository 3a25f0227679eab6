import { avroSchema } from '@tep/schemas'
import type { ContractDrift } from '@tep/observability'
import { describe, expect, it } from 'vitest'
import { parseMerchant, parseShop } from './entity-parsing.ts'
import { EnrichmentInvalidResponseError } from './errors.ts'
import { shopSnapshotData } from './event-snapshots.ts'
import { parseBatch, parseCompleteFindResult, parseFindResult } from './find-parsing.ts'
import { AnswerDrift, MAX_UNKNOWN_MEMBER_NAMES, type ReadContext } from './tolerant-reading.ts'

/**
 * Find results and shop/merchant answers in shapes the description allows but
 * the simulator never sends: ids as JSON numbers, attributes in other types,
 * unknown members. Each is read (normalised, or ignored) and reported as drift;
 * only a find result's shop the pipeline cannot use fails the answer.
 */
function context(operation = 'enrichment.findByCardTransaction'): { ctx: ReadContext; drifts: ContractDrift[] } {
  const drifts: ContractDrift[] = []
  const ctx: ReadContext = {
    operation,
    method: 'GET',
    url: 'http://x/v5/shops/findByCardTransaction?merchantId=***',
    status: 200,
    drift: new AnswerDrift((d) => drifts.push(d)),
  }
  return { ctx, drifts }
}

const kinds = (drifts: ContractDrift[]) => drifts.map((d) => `${d.operation} ${d.field} ${d.kind}`)

describe('a numeric id is the same id in another JSON type', () => {
  it('a find result with a numeric shop.uid and handle is found, with both as decimal text, and reported', () => {
    const { ctx, drifts } = context()
    expect(parseFindResult(ctx, { result: 'found', handle: 77, shop: { uid: 123456 } })).toEqual({
      status: 'found',
      handle: '77',
      shopUid: '123456',
    })
    expect(kinds(drifts)).toEqual([
      'findByCardTransaction handle type',
      'findByCardTransaction shop.uid type',
    ])
  })

  it('/shops/{id} with a numeric uid and merchantUid reads them the same way as a find result', () => {
    const { ctx, drifts } = context('enrichment.getShop')
    const shop = parseShop(ctx, { uid: 123456, merchantUid: 42, type: 'bricks' }, 'body', 'asked')
    expect(shop).toMatchObject({ uid: '123456', merchantUid: '42', type: 'bricks' })
    expect(kinds(drifts)).toEqual(['getShop uid type', 'getShop merchantUid type'])
    const found = parseFindResult(context().ctx, { handle: 'h', shop: { uid: 123456 } })
    expect(found.status === 'found' && found.shopUid).toBe(shop.uid)
  })

  it('/merchants/{id} with a numeric uid is read as its text', () => {
    const { ctx } = context('enrichment.getMerchant')
    expect(parseMerchant(ctx, { uid: 9, name: 'Albert' }, 'body', 'asked')).toEqual({ uid: '9', name: 'Albert' })
  })
})

describe('attributes in other JSON types', () => {
  it('are normalised where the meaning is plain and ignored where it is not; the snapshot stays Avro-valid', () => {
    const { ctx, drifts } = context('enrichment.getShop')
    const shop = parseShop(
      ctx,
      {
        uid: 's1',
        type: 'bricks',
        tags: 'atm',
        category: { name: 5411, logo: null },
        location: {
          address: { street: 'Vodičkova 1', zip: 11000, areas: { '20': 'Praha', '30': { name: 'x' } } },
          coordinates: { lat: '50.08', long: 14.42, type: ['rooftop'] },
        },
        url: { href: 'https://shop.example' },
        googlePlaceId: true,
      },
      'body',
      's1',
    )
    expect(shop).toEqual({
      uid: 's1',
      type: 'bricks',
      category: { name: '5411' },
      location: {
        address: { street: 'Vodičkova 1', zip: '11000', areas: { '20': 'Praha' } },
        coordinates: { lat: 50.08, long: 14.42 },
      },
      googlePlaceId: 'true',
    })
    const snapshot = { ...shopSnapshotData(shop, 's1'), fetchedAt: 1, invalidationItemId: null }
    expect(avroSchema('Shop').type.isValid(snapshot)).toBe(true)
    expect(kinds(drifts).sort()).toEqual(
      [
        'getShop tags type-ignored',
        'getShop category.name type',
        'getShop location.address.zip type',
        'getShop location.address.areas.* type-ignored',
        'getShop location.coordinates.lat type',
        'getShop location.coordinates.type type-ignored',
        'getShop url type-ignored',
        'getShop googlePlaceId type',
      ].sort(),
    )
    // Never a value in what is reported: the labels name members only.
    expect(JSON.stringify(drifts)).not.toMatch(/Vodičkova|50\.08|5411/)
  })

  it('a complete find result whose merchant is not an object keeps the found shop and leaves the merchant out', () => {
    const { ctx, drifts } = context('enrichment.completeFindByCardTransaction')
    const result = parseCompleteFindResult(ctx, { handle: 'h1', shop: { uid: 's1', merchantUid: 'm1' }, merchant: 'm1' })
    expect(result).toMatchObject({ status: 'found', shopUid: 's1', merchant: undefined })
    expect(kinds(drifts)).toEqual(['completeFindByCardTransaction merchant type-ignored'])
  })
})

describe('unknown members', () => {
  it('are ignored where the answer is read, kept on a shop, and reported by name', () => {
    const { ctx, drifts } = context()
    expect(parseFindResult(ctx, { handle: 'h1', score: 0.9, shop: { uid: 's1', rank: 1 } })).toEqual({
      status: 'found',
      handle: 'h1',
      shopUid: 's1',
    })
    const shop = parseShop(ctx, { uid: 's1', openingHours: { mon: '8-20' } })
    expect(shop.openingHours).toEqual({ mon: '8-20' })
    expect(kinds(drifts)).toEqual([
      'findByCardTransaction score unknown-field',
      'findByCardTransaction shop.rank unknown-field',
      'findByCardTransaction openingHours unknown-field',
    ])
  })

  it(`are reported by name up to ${MAX_UNKNOWN_MEMBER_NAMES} names, then as *, so the metric's labels stay few`, () => {
    const { ctx, drifts } = context()
    const body: Record<string, unknown> = { handle: 'h', 'odd name!': 1 }
    for (let i = 0; i < MAX_UNKNOWN_MEMBER_NAMES + 5; i++) body[`extra${i}`] = i
    parseFindResult(ctx, body)
    const fields = new Set(drifts.map((d) => d.field))
    expect(fields.size).toBe(MAX_UNKNOWN_MEMBER_NAMES + 1)
    expect(fields.has('*')).toBe(true)
  })
})

describe('what the pipeline cannot work without', () => {
  it('a shop that is not an object makes the find result invalid, naming body.shop', () => {
    const { ctx } = context()
    const err = captured(() => parseFindResult(ctx, { handle: 'h1', shop: 's1' }))
    expect(err).toBeInstanceOf(EnrichmentInvalidResponseError)
    expect(err.message).toMatch(/with body\.shop is string, not an object holding the found shop's uid/)
  })

  it('a shop.uid that is no id in any JSON type makes the answer invalid, naming the batch entry', () => {
    const { ctx } = context('enrichment.findByCardTransactionBatch')
    const err = captured(() => parseBatch(ctx, [{ handle: 'a', shop: { uid: 's1' } }, { shop: { uid: true } }], 2, () => {}))
    expect(err).toBeInstanceOf(EnrichmentInvalidResponseError)
    expect(err.message).toMatch(/with body\[1\]\.shop\.uid is boolean, not an identifier/)
  })

  it('a result without shop, or with a shop without uid, stays not found (rule 6), reported when the uid is absent', () => {
    const { ctx, drifts } = context()
    expect(parseFindResult(ctx, { handle: 'h1' })).toEqual({ status: 'notFound', handle: 'h1' })
    expect(parseFindResult(ctx, { handle: 'h1', shop: {} })).toEqual({ status: 'notFound', handle: 'h1' })
    expect(kinds(drifts)).toEqual(['findByCardTransaction shop.uid absent'])
  })
})

function captured(fn: () => unknown): Error {
  try {
    fn()
  } catch (err) {
    return err as Error
  }
  throw new Error('expected a throw')
}
