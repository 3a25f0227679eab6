import { describe, expect, it } from 'vitest'
import { InvalidationFeedFormatError } from './errors.ts'
import { pageItems } from './page-items.ts'

describe('pageItems', () => {
  it('flattens batches into items ascending by id and takes the cursor from paging.lastId', () => {
    const result = pageItems(
      {
        currentTime: '2026-11-22T10:00:00Z',
        batches: [
          { level: 'merchant', type: 'update', ids: [7], keys: ['m1@cz'] },
          { level: 'shop', type: 'delete', ids: [5, 6], keys: ['s5', 's6'] },
        ],
        paging: { lastId: 9, hasMore: false },
      },
      4,
    )
    expect(result.items).toEqual([
      { itemId: 5, level: 'shop', type: 'delete', entityKey: 's5', missing: [] },
      { itemId: 6, level: 'shop', type: 'delete', entityKey: 's6', missing: [] },
      { itemId: 7, level: 'merchant', type: 'update', entityKey: 'm1@cz', missing: [] },
    ])
    // lastId 9 > 7: items 8 and 9 were level-filtered, and must not be scanned again.
    expect(result.nextCursor).toBe(9)
    expect(result.currentTime).toBe('2026-11-22T10:00:00Z')
  })

  it('drops items at or below the cursor and repeated ids, so nothing is published twice', () => {
    const result = pageItems(
      {
        batches: [{ level: 'shop', type: 'update', ids: [3, 4, 5, 5], keys: ['a', 'b', 'c', 'c'] }],
        paging: { lastId: 5, hasMore: true },
      },
      4,
    )
    expect(result.items.map((i) => i.itemId)).toEqual([5])
    expect(result.nextCursor).toBe(5)
  })

  it('accepts numeric strings as ids and falls back to the highest item when lastId is absent', () => {
    const result = pageItems(
      { batches: [{ level: 'handle', ids: ['11', '12'], keys: ['h1', 'h2'] }], paging: { hasMore: false } },
      10,
    )
    expect(result.items).toEqual([
      { itemId: 11, level: 'handle', type: null, entityKey: 'h1', missing: [] },
      { itemId: 12, level: 'handle', type: null, entityKey: 'h2', missing: [] },
    ])
    expect(result.nextCursor).toBe(12)
  })

  it('keeps the cursor when the feed has nothing new', () => {
    expect(pageItems({ batches: [], paging: { lastId: 20, hasMore: false } }, 20)).toMatchObject({
      items: [],
      nextCursor: 20,
      hasMore: false,
    })
  })

  it('publishes the items of misaligned keys without keys instead of failing the page', () => {
    const result = pageItems(
      { batches: [{ level: 'shop', ids: [1, 2], keys: ['a'] }], paging: { hasMore: false } },
      0,
    )
    expect(result.items).toEqual([
      { itemId: 1, level: 'shop', type: null, entityKey: '', missing: ['keys'] },
      { itemId: 2, level: 'shop', type: null, entityKey: '', missing: ['keys'] },
    ])
    expect(result.keyProblems).toEqual(['batch of level shop has 2 ids but 1 keys'])
    expect(result.nextCursor).toBe(2)
  })

  it('serves a batch that holds only ids, as the description shows it: level unknown, no key, cursor moved', () => {
    const result = pageItems({ batches: [{ ids: [4, 5] }, { ids: [6] }], paging: { hasMore: false } }, 3)
    expect(result.items).toEqual([
      { itemId: 4, level: 'unknown', type: null, entityKey: '', missing: ['level', 'keys'] },
      { itemId: 5, level: 'unknown', type: null, entityKey: '', missing: ['level', 'keys'] },
      { itemId: 6, level: 'unknown', type: null, entityKey: '', missing: ['level', 'keys'] },
    ])
    expect(result).toMatchObject({ nextCursor: 6, hasMore: false, keyProblems: [] })
  })

  it('marks only what is missing: a level without keys, keys without a level, one empty key', () => {
    const result = pageItems(
      {
        batches: [
          { level: 'merchant', type: 'update', ids: [1] },
          { ids: [2], keys: ['s2'] },
          { level: 'shop', ids: [3, 4], keys: ['s3', ''] },
        ],
        paging: { hasMore: false },
      },
      0,
    )
    expect(result.items.map((i) => [i.itemId, i.level, i.entityKey, i.missing])).toEqual([
      [1, 'merchant', '', ['keys']],
      [2, 'unknown', 's2', ['level']],
      [3, 'shop', 's3', []],
      [4, 'shop', '', ['keys']],
    ])
  })

  it('rejects ids that are not non-negative integers', () => {
    expect(() =>
      pageItems({ batches: [{ level: 'shop', ids: ['x1'], keys: ['a'] }], paging: { hasMore: false } }, 0),
    ).toThrow(/not a non-negative integer/)
    expect(() =>
      pageItems({ batches: [{ level: 'shop', ids: [1.5], keys: ['a'] }], paging: { hasMore: false } }, 0),
    ).toThrow(InvalidationFeedFormatError)
  })

  it('ends the drain on a page that claims more items but does not move the cursor, instead of stalling on it', () => {
    expect(pageItems({ batches: [], paging: { lastId: 8, hasMore: true } }, 8)).toMatchObject({
      items: [],
      nextCursor: 8,
      hasMore: false,
      noProgress: true,
    })
  })

  it('passes over, but moves the cursor past, items of levels outside the configured set (asked without level)', () => {
    const page = pageItems(
      {
        batches: [
          { level: 'handle', ids: [4], keys: ['h'] },
          { level: 'shop', ids: [5], keys: ['s'] },
          { ids: [6] },
          { level: 'handle', ids: [7], keys: ['h2'] },
        ],
        paging: { hasMore: false },
      },
      3,
      new Set(['shop']),
    )
    expect(page.items.map((i) => [i.itemId, i.level])).toEqual([
      [5, 'shop'],
      [6, 'unknown'],
    ])
    expect(page.nextCursor).toBe(7)
  })
})
