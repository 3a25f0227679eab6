import type { ContractDrift } from '@tep/observability'
import { describe, expect, it } from 'vitest'
import { EnrichmentInvalidResponseError } from './errors.ts'
import { parseInvalidationPage, parseItemRange } from './invalidation-parsing.ts'
import type { ParseContext } from './response-parsing.ts'

const ctx: ParseContext = { operation: 'test', method: 'GET', url: 'http://x/v5/invalidations', status: 200 }
const request = { fromId: 6, pageSize: 10 }

function parse(body: unknown, req: { fromId: number; pageSize: number | undefined } = request) {
  const drifts: ContractDrift[] = []
  const page = parseInvalidationPage(ctx, body, req, (d) => drifts.push(d))
  return { page, drifts: drifts.map((d) => `${d.field} ${d.kind}`) }
}

describe('invalidation pages in the shapes the description leaves open', () => {
  it('keeps a numeric currentTime as received, reports the drift', () => {
    const { page, drifts } = parse({ data: { currentTime: 1764355200, batches: [] }, paging: { lastId: 6, hasMore: false } })
    expect(page.currentTime).toBe('1764355200')
    expect(drifts).toEqual(['data.currentTime type'])
  })

  it('reads hasMore "true"/"false", lastId "12" and a numeric type; ignores unknown fields', () => {
    const { page, drifts } = parse({
      data: { currentTime: 't', batches: [{ level: 'shop', type: 3, ids: [7, '12'], keys: ['a', 'b'], weight: 1 }], region: 'eu' },
      paging: { lastId: '12', hasMore: 'true', cursor: 'abc' },
      meta: {},
    })
    expect(page.batches[0]).toEqual({ level: 'shop', type: '3', ids: [7, 12], keys: ['a', 'b'] })
    expect(page.paging).toMatchObject({ lastId: 12, hasMore: true })
    expect(parse({ data: { batches: [] }, paging: { hasMore: 'false', lastId: 6 } }).page.paging.hasMore).toBe(false)
    expect(drifts.sort()).toEqual(
      [
        'body unknown-field',
        'data unknown-field',
        'data.batches[] unknown-field',
        'data.batches[].type type',
        'data.batches[].ids[] type',
        'paging unknown-field',
        'paging.lastId type',
        'paging.hasMore type',
      ].sort(),
    )
  })

  it('derives the cursor when paging is absent or unreadable, and says so', () => {
    const full = parse({ data: { batches: [{ ids: Array.from({ length: 10 }, (_, i) => 7 + i) }] } })
    expect(full.page.paging).toMatchObject({ lastId: 16, hasMore: true })
    expect(full.drifts).toContain('paging absent')
    const odd = parse({ data: { batches: [{ ids: [7] }] }, paging: { lastId: { id: 7 }, hasMore: [true] } })
    expect(odd.page.paging).toMatchObject({ lastId: 7, hasMore: false })
    expect(odd.drifts).toEqual(expect.arrayContaining(['paging.lastId unreadable', 'paging.hasMore unreadable']))
  })

  it('takes batches beside paging (no data object) and an absent batches as an empty page', () => {
    expect(parse({ batches: [{ ids: [7] }], paging: { lastId: 7, hasMore: false } }).page.batches[0]!.ids).toEqual([7])
    const empty = parse({ data: { currentTime: 't' }, paging: { lastId: 9, hasMore: false } })
    expect(empty.page.batches).toEqual([])
    expect(empty.drifts).toEqual(['data.batches absent'])
  })

  it('refuses what the pipeline cannot work without, naming the field', () => {
    const refuse = (body: unknown) => () => parseInvalidationPage(ctx, body, request)
    expect(refuse({ data: { batches: [{ level: 'shop', ids: 'x' }] } })).toThrow(/body\.data\.batches\[0\]\.ids not an array \(string\)/)
    expect(refuse({ data: { batches: [{ ids: [7, 'x'] }] } })).toThrow(/body\.data\.batches\[0\]\.ids\[1\] not a non-negative integer/)
    expect(refuse({ data: { batches: {} } })).toThrow(/body\.data\.batches not an array/)
    expect(refuse({ paging: {} })).toThrow(EnrichmentInvalidResponseError)
  })

  it('reports nothing for the modelled shape', () => {
    const { drifts } = parse({
      data: { currentTime: 't', batches: [{ level: 'shop', type: 'update', ids: [7], keys: ['s'] }] },
      paging: { fromId: 6, toId: null, pageSize: 10, lastId: 7, hasMore: false },
    })
    expect(drifts).toEqual([])
  })
})

describe('item/range answers', () => {
  it('reads the modelled shape, string ids and the ids at the top level', () => {
    expect(parseItemRange(ctx, { data: { fromId: 4, toId: 9, currentTime: 't' } })).toEqual({ fromId: 4, toId: 9, currentTime: 't' })
    const drifts: ContractDrift[] = []
    expect(parseItemRange(ctx, { fromId: '4', toId: '9' }, (d) => drifts.push(d))).toMatchObject({ fromId: 4, toId: 9 })
    expect(drifts.map((d) => `${d.field} ${d.kind}`)).toContain('item/range.data shape')
  })

  it('refuses an answer without a readable fromId, naming it (the poller then falls back)', () => {
    expect(() => parseItemRange(ctx, { data: { first: 4, last: 9 } })).toThrow(/body\.data\.fromId missing/)
    expect(() => parseItemRange(ctx, { range: [4, 9] })).toThrow(/body\.data missing/)
  })
})
