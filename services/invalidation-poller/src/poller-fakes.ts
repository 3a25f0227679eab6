import { PipelineError } from '@tep/errors'
import { createLogger, createMetricsRegistry } from '@tep/observability'
import type { CursorLog, StoredCursor } from './cursor.ts'
import type { FeedPage, FeedPageQuery, InvalidationFeed } from './feed.ts'
import { createPollerMetrics } from './metrics.ts'
import type { FeedItem } from './page-items.ts'
import { InvalidationPoller, type InvalidationPollerDeps } from './poller.ts'

/** Fakes of the poller's ports for its unit tests (not exported by the package). */

export interface SimItem {
  id: number
  level: string
  type: string
  key: string
  createdAt: number
}

function badRequest(apiError?: Record<string, string>): PipelineError {
  return new PipelineError('400', { code: 'ENRICHMENT_BAD_REQUEST', details: { status: 400, ...(apiError ? { apiError } : {}) } })
}

/** A feed with the paging semantics of schemas/openapi/enrichment-v5.yaml. */
export class FakeFeed implements InvalidationFeed {
  readonly items: SimItem[] = []
  readonly calls: FeedPageQuery[] = []
  maxPageSize = 1000
  failures: unknown[] = []
  /** Batches as the interface description shows them: `ids` and nothing else. */
  idsOnly = false
  /** Answer 400 to any request that carries `level`: naming it in the error body, or not. */
  refuseLevel: 'named' | 'unnamed' | undefined
  /** Answer item/range with this error. */
  itemRangeError: unknown
  itemRangeCalls = 0

  add(level: string, key: string, createdAt = 0, type = 'update'): void {
    this.items.push({ id: this.items.length + 1, level, type, key, createdAt })
  }

  async page(query: FeedPageQuery): Promise<FeedPage> {
    this.calls.push(query)
    const failure = this.failures.shift()
    if (failure) throw failure
    if (this.refuseLevel !== undefined && query.levels !== undefined)
      throw badRequest(this.refuseLevel === 'named' ? { code: 'INVALID_PARAMETER', parameter: 'level' } : undefined)
    if (query.pageSize > this.maxPageSize) throw badRequest({ code: 'INVALID_PARAMETER', parameter: 'pageSize' })
    const newest = this.items.length
    const matching = this.items.filter(
      (i) => i.id > query.fromId && (query.levels === undefined || query.levels.includes(i.level)),
    )
    const page = matching.slice(0, query.pageSize)
    const hasMore = matching.length > query.pageSize
    const lastId = hasMore ? page.at(-1)!.id : Math.max(query.fromId, newest)
    const batches: FeedPage['batches'][number][] = []
    for (const item of page) {
      const last = batches.at(-1)
      if (last && last.level === item.level && last.type === item.type) {
        ;(last.ids as number[]).push(item.id)
        ;(last.keys as string[]).push(item.key)
      } else batches.push({ level: item.level, type: item.type, ids: [item.id], keys: [item.key] })
    }
    return {
      currentTime: new Date(0).toISOString(),
      batches: this.idsOnly ? batches.map((b) => ({ ids: b.ids })) : batches,
      paging: { lastId, hasMore },
    }
  }

  async itemRange(from: Date) {
    this.itemRangeCalls += 1
    if (this.itemRangeError !== undefined) throw this.itemRangeError
    const first = this.items.find((i) => i.createdAt >= from.getTime())
    const toId = this.items.length
    return { fromId: first ? first.id - 1 : toId, toId, currentTime: new Date(0).toISOString() }
  }
}

/** A cursor log whose commits can fail before or after they really took effect. */
export class MemoryLog implements CursorLog {
  published: FeedItem[] = []
  cursor: StoredCursor | undefined
  commits = 0
  failNext: 'before' | 'after' | undefined

  async read() {
    return this.cursor
  }
  async commitPage(items: readonly FeedItem[], cursor: StoredCursor) {
    const mode = this.failNext
    this.failNext = undefined
    if (mode === 'before')
      throw new PipelineError('broker unavailable', { code: 'KAFKA_UNAVAILABLE', retriable: true })
    this.published.push(...items)
    this.cursor = cursor
    this.commits += 1
    if (mode === 'after')
      throw new PipelineError('commit timed out', { code: 'KAFKA_TIMEOUT', retriable: true })
  }
  async recover() {
    return this.cursor
  }
  async close() {}
}

export function poller(feed: FakeFeed, log: MemoryLog, overrides: Partial<InvalidationPollerDeps> = {}) {
  const registry = createMetricsRegistry({ service: 'test', defaultMetrics: false })
  return new InvalidationPoller({
    feed,
    log,
    feedKey: 'enrichment-v5:handle,merchant,shop',
    transactionalId: 'tx',
    levels: ['shop', 'merchant', 'handle'],
    pageSize: 2,
    pollIntervalMs: 60_000,
    startAt: () => new Date(0),
    backoff: { initialDelayMs: 1, maxDelayMs: 2 },
    logger: createLogger({ name: 'test', level: 'silent' }),
    metrics: createPollerMetrics(registry),
    isFenced: (err) => err instanceof PipelineError && err.code === 'FENCED',
    ...overrides,
  })
}

