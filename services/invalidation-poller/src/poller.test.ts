import { PipelineError } from '@tep/errors'
import { createLogger, createMetricsRegistry, Readiness } from '@tep/observability'
import { describe, expect, it } from 'vitest'
import { createPollerMetrics } from './metrics.ts'
import { FakeFeed, MemoryLog, poller } from './poller-fakes.ts'

describe('InvalidationPoller', () => {
  it('drains a feed whose batches hold only ids: items published as level unknown, counted and warned about once', async () => {
    const feed = new FakeFeed()
    feed.idsOnly = true
    for (let i = 0; i < 5; i++) feed.add(i % 2 ? 'merchant' : 'shop', `k${i}`)
    const log = new MemoryLog()
    const registry = createMetricsRegistry({ service: 'test', defaultMetrics: false })
    const warnings: { fields: Record<string, unknown>; message: string }[] = []
    const logger = createLogger({ name: 'test', level: 'silent' })
    logger.warn = ((fields: Record<string, unknown>, message: string) => {
      warnings.push({ fields, message })
    }) as typeof logger.warn
    const p = poller(feed, log, { metrics: createPollerMetrics(registry), logger })
    expect(await p.drain()).toEqual({ pages: 3, items: 5 })
    expect(log.cursor?.lastItemId).toBe(5)
    expect(log.published).toEqual(
      [1, 2, 3, 4, 5].map((itemId) => ({
        itemId,
        level: 'unknown',
        type: null,
        entityKey: '',
        missing: ['level', 'keys'],
      })),
    )
    const counted = await registry.getSingleMetric('tep_invalidation_poller_incomplete_items_total')?.get()
    expect(counted?.values).toEqual([{ labels: { missing: 'level,keys' }, value: 5 }])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.message).toMatch(/lack level and keys/)
    expect(warnings[0]!.fields).toMatchObject({ items: { 'level,keys': 5 } })
    // Nothing new: the next drain neither publishes nor warns again.
    expect(await p.drain()).toEqual({ pages: 0, items: 0 })
    expect(warnings).toHaveLength(1)
  })

  it('stores the item/range start before the first page, then drains every page in order', async () => {
    const feed = new FakeFeed()
    feed.add('shop', 'old', 0)
    for (let i = 0; i < 5; i++) feed.add(i % 2 ? 'merchant' : 'shop', `k${i}`, 1000)
    const log = new MemoryLog()
    const p = poller(feed, log, { startAt: () => new Date(1000) })
    const result = await p.drain()
    expect(result).toEqual({ pages: 3, items: 5 })
    expect(log.published.map((i) => i.itemId)).toEqual([2, 3, 4, 5, 6])
    // first commit: the empty start cursor (item 1 precedes the start moment)
    expect(log.commits).toBe(4)
    expect(log.cursor?.lastItemId).toBe(6)
    expect(feed.calls.map((c) => c.fromId)).toEqual([1, 3, 5])
  })

  it('resumes from the stored cursor, ignoring the start moment', async () => {
    const feed = new FakeFeed()
    for (let i = 0; i < 4; i++) feed.add('shop', `k${i}`)
    const log = new MemoryLog()
    log.cursor = { feed: 'f', lastItemId: 2, feedCurrentTime: null, updatedAt: 0 }
    await poller(feed, log, { startAt: () => new Date(10_000) }).drain()
    expect(log.published.map((i) => i.itemId)).toEqual([3, 4])
  })

  it('reads the feed again from id 0 when the stored cursor lies beyond its head (the ids went back), and says so', async () => {
    // A simulator started afresh on a stack that kept the cursor of an earlier one (or a restored service):
    // resuming after id 82 would skip the new items 1-3 and every later one up to 82.
    const feed = new FakeFeed()
    for (let i = 0; i < 3; i++) feed.add('shop', `k${i}`)
    const log = new MemoryLog()
    log.cursor = { feed: 'f', lastItemId: 82, feedCurrentTime: null, updatedAt: 0 }
    const p = poller(feed, log)
    await p.drain()
    expect(log.published.map((i) => i.itemId)).toEqual([1, 2, 3])
    expect(log.cursor?.lastItemId).toBe(3)
  })

  it('moves the cursor past level-filtered items without publishing them', async () => {
    const feed = new FakeFeed()
    feed.add('shop', 's1')
    feed.add('handle', 'h1')
    feed.add('handle', 'h2')
    const log = new MemoryLog()
    await poller(feed, log, { levels: ['shop'] }).drain()
    expect(log.published.map((i) => i.entityKey)).toEqual(['s1'])
    expect(log.cursor?.lastItemId).toBe(3)
  })

  it('halves the page size on a 400 and carries on', async () => {
    const feed = new FakeFeed()
    feed.maxPageSize = 2
    for (let i = 0; i < 5; i++) feed.add('shop', `k${i}`)
    const log = new MemoryLog()
    await poller(feed, log, { pageSize: 8 }).drain()
    expect(feed.calls.map((c) => c.pageSize)).toEqual([8, 4, 2, 2, 2])
    expect(log.published.map((i) => i.itemId)).toEqual([1, 2, 3, 4, 5])
  })

  it('gives up halving at page size 1 with an error naming the settings to check', async () => {
    const feed = new FakeFeed()
    feed.maxPageSize = 0
    feed.add('shop', 'a')
    await expect(poller(feed, new MemoryLog(), { pageSize: 2 }).drain()).rejects.toThrow(
      /even with pageSize 1; check INVALIDATIONS_LEVELS/,
    )
  })

  it('publishes every item exactly once when commits fail before or after taking effect', async () => {
    const feed = new FakeFeed()
    for (let i = 0; i < 7; i++) feed.add('shop', `k${i}`)
    const log = new MemoryLog()
    const registry = createMetricsRegistry({ service: 't', defaultMetrics: false })
    const metrics = createPollerMetrics(registry)
    let commitsSeen = 0
    const controller = new AbortController()
    const readiness = new Readiness()
    const p = poller(feed, log, {
      metrics,
      readiness,
      onPageCommitted: () => {
        commitsSeen += 1
        if (commitsSeen === 1) log.failNext = 'after'
        if (commitsSeen === 2) log.failNext = 'before'
        if (log.cursor?.lastItemId === 7) controller.abort()
      },
    })
    await p.run(controller.signal)
    expect(log.published.map((i) => i.itemId)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(
      (await registry.getSingleMetric('tep_invalidation_poller_errors_total')!.get()).values
        .map((v) => v.labels.code)
        .sort(),
    ).toEqual(['KAFKA_TIMEOUT', 'KAFKA_UNAVAILABLE'])
  })

  it('retries a failing API call with the same cursor instead of skipping', async () => {
    const feed = new FakeFeed()
    for (let i = 0; i < 3; i++) feed.add('shop', `k${i}`)
    feed.failures = [
      new PipelineError('503', { code: 'ENRICHMENT_UNAVAILABLE', retriable: true, details: { status: 503 } }),
    ]
    const log = new MemoryLog()
    const controller = new AbortController()
    const p = poller(feed, log, {
      pageSize: 10,
      onPageCommitted: ({ cursor }) => {
        if (cursor.lastItemId === 3) controller.abort()
      },
    })
    await p.run(controller.signal)
    expect(feed.calls.map((c) => c.fromId)).toEqual([0, 0])
    expect(log.published.map((i) => i.itemId)).toEqual([1, 2, 3])
  })

  it('stops with a fencing error when a newer instance took over', async () => {
    const feed = new FakeFeed()
    feed.add('shop', 'a')
    const log = new MemoryLog()
    log.commitPage = async () => {
      throw new PipelineError('fenced', { code: 'FENCED' })
    }
    const readiness = new Readiness()
    await expect(poller(feed, log, { readiness }).run(new AbortController().signal)).rejects.toMatchObject({
      code: 'INVALIDATION_POLLER_FENCED',
    })
    expect(readiness.isReady()).toBe(false)
  })

  it('polls again after the interval or when asked, picking up new items', async () => {
    const feed = new FakeFeed()
    feed.add('shop', 'a')
    const log = new MemoryLog()
    const controller = new AbortController()
    const p = poller(feed, log, {
      pollIntervalMs: 3_600_000,
      onPageCommitted: ({ cursor }) => {
        if (cursor.lastItemId === 1) {
          feed.add('merchant', 'm')
          // Not yet caught up (hasMore false was not seen); the wake must survive until the wait.
          p.pollNow()
        }
        if (cursor.lastItemId === 2) controller.abort()
      },
    })
    await p.run(controller.signal)
    expect(log.published.map((i) => i.entityKey)).toEqual(['a', 'm'])
  })
})
