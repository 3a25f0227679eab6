import { PipelineError } from '@tep/errors'
import type { ContractDrift } from '@tep/observability'
import { describe, expect, it } from 'vitest'
import { blamedParameter } from './negotiation.ts'
import { FakeFeed, MemoryLog, poller } from './poller-fakes.ts'
import { findFeedHead } from './start-position.ts'

function drifts() {
  const seen: ContractDrift[] = []
  return { seen, onContractDrift: (d: ContractDrift) => seen.push(d) }
}

function notFound(): PipelineError {
  return new PipelineError('404', { code: 'ENRICHMENT_NOT_FOUND', details: { status: 404 } })
}

describe('a service that refuses the level parameter', () => {
  it('regression: an unexplained 400 for level no longer halves the page size 8 -> 4 -> 2 -> 1 and stalls', async () => {
    const feed = new FakeFeed()
    feed.refuseLevel = 'unnamed'
    for (let i = 0; i < 5; i++) feed.add(i % 2 ? 'shop' : 'merchant', `k${i}`)
    const log = new MemoryLog()
    const { seen, onContractDrift } = drifts()
    const p = poller(feed, log, { pageSize: 8, onContractDrift })
    await p.drain()
    expect(log.published.map((i) => i.itemId)).toEqual([1, 2, 3, 4, 5])
    expect(log.cursor?.lastItemId).toBe(5)
    expect(p.sendsLevel).toBe(false)
    // One request with level, then without it for good, at the configured size.
    expect(feed.calls.map((c) => [c.pageSize, c.levels === undefined ? '-' : 'level'])).toEqual([
      [8, 'level'],
      [8, '-'],
    ])
    expect(seen.map((d) => `${d.operation} ${d.field} ${d.kind}`)).toEqual(['invalidations level param-refused'])
    // Remembered: the next drain does not send level again.
    feed.add('shop', 'k5')
    await p.drain()
    expect(feed.calls.at(-1)!.levels).toBeUndefined()
    expect(log.published.at(-1)!.itemId).toBe(6)
  })

  it('drops level at once when the 400 names it, and passes over levels outside the configured set', async () => {
    const feed = new FakeFeed()
    feed.refuseLevel = 'named'
    feed.add('shop', 's1')
    feed.add('handle', 'h1')
    feed.add('shop', 's2')
    const log = new MemoryLog()
    await poller(feed, log, { levels: ['shop'], pageSize: 10 }).drain()
    expect(log.published.map((i) => [i.itemId, i.level])).toEqual([
      [1, 'shop'],
      [3, 'shop'],
    ])
    expect(log.cursor?.lastItemId).toBe(3)
    expect(feed.calls).toHaveLength(2)
  })

  it('still halves the page size for a 400 that is not about level, keeping level', async () => {
    const feed = new FakeFeed()
    feed.maxPageSize = 2
    for (let i = 0; i < 3; i++) feed.add('shop', `k${i}`)
    const log = new MemoryLog()
    const p = poller(feed, log, { pageSize: 4 })
    await p.drain()
    expect(log.published).toHaveLength(3)
    expect(p.sendsLevel).toBe(true)
  })
})

describe('page size recovery', () => {
  it('doubles back to the configured size after successful pages', async () => {
    const feed = new FakeFeed()
    feed.maxPageSize = 1
    for (let i = 0; i < 3; i++) feed.add('shop', `k${i}`)
    const log = new MemoryLog()
    const p = poller(feed, log, { pageSize: 4 })
    await p.drain()
    feed.maxPageSize = 1000
    for (let i = 3; i < 40; i++) feed.add('shop', `k${i}`)
    await p.drain()
    const sizes = feed.calls.map((c) => c.pageSize)
    expect(sizes.slice(0, 3)).toEqual([4, 2, 1])
    expect(sizes.at(-1)).toBe(4)
    expect(log.published).toHaveLength(40)
  })
})

describe('a first start without item/range', () => {
  it('starts at the feed head found with /invalidations when item/range answers 404 (start moment now)', async () => {
    const feed = new FakeFeed()
    for (let i = 0; i < 37; i++) feed.add('shop', `old${i}`)
    feed.itemRangeError = notFound()
    const log = new MemoryLog()
    const { seen, onContractDrift } = drifts()
    const p = poller(feed, log, { startAt: () => new Date(), onContractDrift })
    await p.ensureCursor()
    expect(log.cursor?.lastItemId).toBe(37)
    feed.add('shop', 'new')
    await p.drain()
    expect(log.published.map((i) => i.entityKey)).toEqual(['new'])
    expect(feed.itemRangeCalls).toBe(1) // not asked again, not even for the lag gauge
    expect(seen.map((d) => `${d.field} ${d.kind}`)).toEqual(['item/range operation-missing'])
  })

  it('reads the whole feed from id 0 when the start moment is in the past (a superset, never a gap)', async () => {
    const feed = new FakeFeed()
    feed.add('shop', 'a')
    feed.add('merchant', 'b')
    feed.itemRangeError = new PipelineError('unreadable', { code: 'ENRICHMENT_INVALID_RESPONSE' })
    const log = new MemoryLog()
    await poller(feed, log, { startAt: () => new Date(Date.now() - 7 * 86_400_000) }).drain()
    expect(log.published.map((i) => i.entityKey)).toEqual(['a', 'b'])
  })

  it('takes INVALIDATIONS_START_ID without asking item/range', async () => {
    const feed = new FakeFeed()
    for (let i = 0; i < 5; i++) feed.add('shop', `k${i}`)
    const log = new MemoryLog()
    const p = poller(feed, log, { startId: 3 })
    await p.ensureCursor()
    expect(feed.itemRangeCalls).toBe(0)
    await p.drain()
    expect(log.published.map((i) => i.itemId)).toEqual([4, 5])
  })

  it('keeps retrying item/range while it fails for a while (5xx), without falling back', async () => {
    const feed = new FakeFeed()
    feed.itemRangeError = new PipelineError('503', { code: 'ENRICHMENT_SERVER_ERROR', retriable: true, details: { status: 503 } })
    await expect(poller(feed, new MemoryLog()).ensureCursor()).rejects.toThrow('503')
  })
})

describe('findFeedHead', () => {
  it('finds the head of feeds of any length in two probes per bit', async () => {
    for (const head of [0, 1, 2, 3, 37, 1024, 1_000_003]) {
      const found = await findFeedHead(async (fromId) => fromId < head)
      expect(found.head).toBe(head)
      expect(found.probes).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(head + 2)) + 2)
    }
  })
})

describe('blamedParameter', () => {
  it('names level or pageSize only when the answer names exactly one of them', () => {
    const err = (apiError?: object, bodyText?: string) =>
      Object.assign(new Error('x'), { status: 400, ...(apiError ? { apiError } : {}), cause: { bodyText } })
    expect(blamedParameter(err({ parameter: 'level' }))).toBe('level')
    expect(blamedParameter(err({ code: 'UNKNOWN_PARAMETER', message: 'unknown query parameter: level' }))).toBe('level')
    expect(blamedParameter(err({ parameter: 'pageSize' }))).toBe('pageSize')
    expect(blamedParameter(err(undefined, 'Bad Request: page_size too large'))).toBe('pageSize')
    expect(blamedParameter(err(undefined, '?fromId=1&level=shop&pageSize=5'))).toBeUndefined()
    expect(blamedParameter(err(undefined, 'Bad Request'))).toBeUndefined()
  })
})
