import { describe, expect, it } from 'vitest'
import { PagingError, walkItems, walkPages, type Page } from './paging.ts'

/** A fake bank holding `total` items, paged like COBS; `style` varies how it reports the end. */
function fakeBank(
  total: number,
  pageSize: number,
  style: 'cobs' | 'no-next-page' | 'trailing-empty' = 'cobs',
) {
  const calls: number[] = []
  const items = Array.from({ length: total }, (_, i) => i)
  const source = async (page: number): Promise<Page<number>> => {
    calls.push(page)
    let pageCount = Math.ceil(total / pageSize)
    if (style === 'trailing-empty' && total % pageSize === 0) pageCount += 1
    const slice = items.slice(page * pageSize, (page + 1) * pageSize)
    const last = page + 1 >= pageCount
    return {
      pageNumber: page,
      pageCount,
      pageSize,
      totalCount: total,
      ...(style !== 'no-next-page' && !last ? { nextPage: page + 1 } : {}),
      items: slice,
    }
  }
  return { source, calls }
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of it) out.push(x)
  return out
}

describe('walkPages / walkItems', () => {
  it.each([
    [0, 10, 1],
    [9, 10, 1],
    [10, 10, 1],
    [11, 10, 2],
    [20, 10, 2],
    [100, 100, 1],
    [250, 100, 3],
  ])('%i items in pages of %i: every item once, %i request(s)', async (total, size, requests) => {
    const { source, calls } = fakeBank(total, size)
    expect(await collect(walkItems(source))).toEqual(Array.from({ length: total }, (_, i) => i))
    expect(calls).toHaveLength(requests)
  })

  it('follows pageCount when the bank never sends nextPage', async () => {
    const { source, calls } = fakeBank(25, 10, 'no-next-page')
    expect(await collect(walkItems(source))).toHaveLength(25)
    expect(calls).toEqual([0, 1, 2])
  })

  it('reads a trailing empty page on exact multiples and then stops', async () => {
    const { source, calls } = fakeBank(30, 10, 'trailing-empty')
    const pages = await collect(walkPages(source))
    expect(pages.map((p) => p.items.length)).toEqual([10, 10, 10, 0])
    expect(calls).toEqual([0, 1, 2, 3])
  })

  it('yields a single empty page for an empty history (pageCount 0)', async () => {
    const { source, calls } = fakeBank(0, 10)
    const pages = await collect(walkPages(source))
    expect(pages).toHaveLength(1)
    expect(pages[0]!.items).toEqual([])
    expect(calls).toEqual([0])
  })

  it('continues past an empty page in the middle when the bank says there is more', async () => {
    const answers: Page<string>[] = [
      { pageNumber: 0, pageCount: 3, pageSize: 10, nextPage: 1, items: ['a'] },
      { pageNumber: 1, pageCount: 3, pageSize: 10, nextPage: 2, items: [] },
      { pageNumber: 2, pageCount: 3, pageSize: 10, items: ['c'] },
    ]
    expect(await collect(walkItems(async (p) => answers[p]!))).toEqual(['a', 'c'])
  })

  it('starts at a given page and follows a nextPage that skips ahead', async () => {
    const seen: number[] = []
    const source = async (p: number): Promise<Page<number>> => {
      seen.push(p)
      return p === 2
        ? { pageNumber: 2, pageCount: 6, pageSize: 10, nextPage: 5, items: [2] }
        : { pageNumber: p, pageCount: 6, pageSize: 10, items: [p] }
    }
    expect(await collect(walkItems(source, 2))).toEqual([2, 5])
    expect(seen).toEqual([2, 5])
  })

  it('refuses a nextPage that does not advance instead of looping', async () => {
    const source = async (): Promise<Page<number>> => ({
      pageNumber: 1,
      pageCount: 5,
      pageSize: 10,
      nextPage: 1,
      items: [1],
    })
    await expect(collect(walkItems(source, 1))).rejects.toThrow(PagingError)
  })

  it('refuses an answer for another page than the one asked for (a bank ignoring page)', async () => {
    const source = async (): Promise<Page<number>> => ({
      pageNumber: 0,
      pageCount: 3,
      pageSize: 10,
      items: [0],
    })
    await expect(collect(walkItems(source))).rejects.toThrow(/asked the bank for page 1, it answered page 0/)
  })

  it('stops fetching when the consumer stops early', async () => {
    const { source, calls } = fakeBank(100, 10)
    for await (const item of walkItems(source)) {
      if (item === 12) break
    }
    expect(calls).toEqual([0, 1])
  })
})
