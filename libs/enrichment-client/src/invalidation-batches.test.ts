import { describe, expect, it } from 'vitest'
import { parseInvalidationPage } from './invalidation-parsing.ts'
import type { ParseContext } from './response-parsing.ts'

const ctx: ParseContext = { operation: 'test', method: 'GET', url: 'http://x/v5/invalidations', status: 200 }

describe('invalidation batches (the description gives each only `ids`)', () => {
  it('accepts batches that hold only ids, and drops keys not aligned with ids instead of failing the page', () => {
    const page = parseInvalidationPage(
      ctx,
      {
        data: { batches: [{ ids: [7, 8] }, { level: 'shop', ids: [9, 10], keys: ['s9'] }, { level: '', ids: [11], keys: [''] }] },
        paging: { lastId: 11, hasMore: false },
      },
      { fromId: 6, pageSize: undefined },
    )
    expect(page.batches).toEqual([
      { level: undefined, type: undefined, ids: [7, 8], keys: undefined },
      {
        level: 'shop',
        type: undefined,
        ids: [9, 10],
        keys: undefined,
        keysDropped: 'body.data.batches[1].keys is not an array aligned with ids',
      },
      // An empty level or key is no information: left undefined.
      { level: undefined, type: undefined, ids: [11], keys: [undefined] },
    ])
    expect(page.paging).toMatchObject({ lastId: 11, hasMore: false })
  })

  it('still refuses a batch without ids: the one member the description names', () => {
    expect(() =>
      parseInvalidationPage(ctx, { data: { batches: [{ level: 'shop' }] } }, { fromId: 0, pageSize: undefined }),
    ).toThrow(/batches\[0\]\.ids not an array/)
  })
})
