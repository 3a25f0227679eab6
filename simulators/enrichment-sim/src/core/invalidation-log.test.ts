import { describe, expect, it } from 'vitest'
import { InvalidationLog, LEVELS } from './invalidation-log.ts'
import type { Level } from './invalidation-log.ts'

const all = new Set<Level>(LEVELS)

function logWith(levels: Level[]): InvalidationLog {
  const log = new InvalidationLog()
  levels.forEach((level, i) => log.append(level, level === 'handle' ? 'remap' : 'update', `${level}-${i + 1}`, 1_000 + i))
  return log
}

describe('InvalidationLog.page', () => {
  it('treats fromId as exclusive and toId as inclusive', () => {
    const log = logWith(['shop', 'shop', 'shop', 'shop', 'shop'])
    const page = log.page({ fromId: 1, toId: 3, levels: all, pageSize: 100 })
    expect(page.batches).toEqual([{ level: 'shop', type: 'update', ids: [2, 3], keys: ['shop-2', 'shop-3'] }])
    expect(page.paging).toEqual({ fromId: 1, toId: 3, pageSize: 100, lastId: 3, hasMore: false })
  })

  it('pages to the end by following lastId, returning every item exactly once', () => {
    const log = logWith(Array.from({ length: 23 }, (_, i) => LEVELS[i % 3] as Level))
    const seen: number[] = []
    let cursor = 0
    for (let calls = 0; calls < 10; calls++) {
      const page = log.page({ fromId: cursor, levels: all, pageSize: 5 })
      seen.push(...page.batches.flatMap((b) => b.ids))
      cursor = page.paging.lastId
      if (!page.paging.hasMore) break
    }
    expect(seen).toEqual(Array.from({ length: 23 }, (_, i) => i + 1))
    expect(cursor).toBe(23)
  })

  it('groups consecutive items of the same level and type into one batch', () => {
    const log = logWith(['shop', 'shop', 'merchant', 'shop'])
    expect(log.page({ fromId: 0, levels: all, pageSize: 10 }).batches.map((b) => [b.level, b.ids])).toEqual([
      ['shop', [1, 2]],
      ['merchant', [3]],
      ['shop', [4]],
    ])
  })

  it('skips filtered levels and moves the cursor past a filtered-out tail', () => {
    const log = logWith(['shop', 'merchant', 'shop', 'merchant', 'merchant'])
    const first = log.page({ fromId: 0, levels: new Set(['shop']), pageSize: 1 })
    expect(first.batches.flatMap((b) => b.ids)).toEqual([1])
    expect(first.paging).toMatchObject({ lastId: 1, hasMore: true })
    const second = log.page({ fromId: 1, levels: new Set(['shop']), pageSize: 1 })
    expect(second.batches.flatMap((b) => b.ids)).toEqual([3])
    expect(second.paging).toMatchObject({ lastId: 5, hasMore: false })
  })

  it('returns an empty page with the cursor unchanged when nothing is newer', () => {
    const log = logWith(['shop'])
    expect(log.page({ fromId: 1, levels: all, pageSize: 10 })).toEqual({ batches: [], paging: { fromId: 1, toId: null, pageSize: 10, lastId: 1, hasMore: false } })
    expect(log.page({ fromId: 7, levels: all, pageSize: 10 }).paging.lastId).toBe(7)
  })
})

describe('InvalidationLog.rangeFrom', () => {
  it('gives the exclusive cursor before the first item at or after the moment', () => {
    const log = logWith(['shop', 'shop', 'shop'])
    expect(log.rangeFrom(1_001)).toEqual({ fromId: 1, toId: 3 })
    expect(log.rangeFrom(0)).toEqual({ fromId: 0, toId: 3 })
    expect(log.rangeFrom(5_000)).toEqual({ fromId: 3, toId: 3 })
  })

  it('keeps timestamps monotonic when the clock goes backwards', () => {
    const log = new InvalidationLog()
    log.append('shop', 'update', 'a', 2_000)
    const item = log.append('shop', 'update', 'b', 1_000)
    expect(item.at).toBe(2_000)
  })
})
