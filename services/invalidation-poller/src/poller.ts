import { errorCode, isRetriable } from '@tep/errors'
import type { ContractDriftListener, Logger, Readiness } from '@tep/observability'
import { backoffDelay, resolvePollerBackoff, type PollerBackoffPolicy } from './backoff.ts'
import type { CursorLog, StoredCursor } from './cursor.ts'
import { InvalidationPollerFencedError } from './errors.ts'
import type { InvalidationFeed } from './feed.ts'
import type { PollerMetrics } from './metrics.ts'
import { FeedPager } from './feed-pager.ts'
import { itemRangeUnavailable } from './negotiation.ts'
import { pageItems, type FeedItem } from './page-items.ts'
import { PageSize } from './page-size.ts'
import { findFeedHead, RECENT_START_MS } from './start-position.ts'

export interface PageCommitted {
  items: readonly FeedItem[]
  cursor: StoredCursor
}

export interface InvalidationPollerDeps {
  feed: InvalidationFeed
  log: CursorLog
  /** Cursor key, see `feedName`. */
  feedKey: string
  /** Transactional id, for the fencing message. */
  transactionalId: string
  levels: readonly string[]
  pageSize: number
  pollIntervalMs: number
  /** Where to start when no cursor is stored yet. Ignored once a cursor exists. */
  startAt: () => Date
  /** INVALIDATIONS_START_ID: the exclusive start id when no cursor is stored yet; item/range is then not asked. */
  startId?: number
  /** Told of every tolerated deviation from the modelled feed (refused `level`, missing item/range, ...). */
  onContractDrift?: ContractDriftListener
  backoff?: Partial<PollerBackoffPolicy>
  logger: Logger
  metrics: PollerMetrics
  readiness?: Readiness
  /** True for the Kafka error that says a newer producer with our transactional id exists. */
  isFenced: (err: unknown) => boolean
  onPageCommitted?: (page: PageCommitted) => void
  now?: () => number
  random?: () => number
}

const READINESS_CHECK = 'invalidation-feed'

function retryAfterOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const e = err as { retryAfterMs?: unknown; details?: { retryAfterMs?: unknown } }
  const v = e.retryAfterMs ?? e.details?.retryAfterMs
  return typeof v === 'number' ? v : undefined
}

/**
 * Follows the invalidation feed: drains it page by page to its end, commits
 * each page's items together with the cursor, then waits for the next poll.
 *
 * The in-memory cursor only ever moves after a successful commit, and after a
 * commit of unknown outcome it is re-read from Kafka, so what is published is
 * exactly the feed, once, in order, whatever fails in between.
 */
export class InvalidationPoller {
  private cursor: StoredCursor | undefined
  private needsRecovery = false
  private readonly pager: FeedPager
  private readonly backoff: PollerBackoffPolicy
  private readonly now: () => number
  private wake: (() => void) | undefined
  private wakeRequested = false
  private readonly deps: InvalidationPollerDeps
  /** Why item/range is not used any more (remembered for the process), once it proved unavailable. */
  private itemRangeMissing: string | undefined

  constructor(deps: InvalidationPollerDeps) {
    this.deps = deps
    this.pager = new FeedPager({
      feed: deps.feed,
      levels: deps.levels,
      pageSize: new PageSize(deps.pageSize),
      logger: deps.logger,
      metrics: deps.metrics,
      drift: (field, kind, detail) => this.drift(field, kind, detail),
      timed: (operation, call) => this.timed(operation, call),
    })
    this.backoff = resolvePollerBackoff(deps.backoff)
    this.now = deps.now ?? Date.now
    deps.metrics.pageSize.set(deps.pageSize)
    deps.readiness?.register(READINESS_CHECK, 'reading the cursor')
  }

  /** The committed position, once known. */
  get position(): StoredCursor | undefined {
    return this.cursor
  }

  /** Ends the current wait between polls (an operator's "poll now"). */
  pollNow(): void {
    this.wakeRequested = true
    this.wake?.()
  }

  /**
   * Polls until `signal` aborts. Failures back off and retry the same page;
   * only fencing by a newer instance ends the loop with an error.
   */
  async run(signal: AbortSignal): Promise<void> {
    let failures = 0
    while (!signal.aborted) {
      try {
        await this.ensureCursor(signal)
        await this.drain(signal)
        failures = 0
        this.deps.readiness?.set(READINESS_CHECK, true)
        await this.waitFor(this.deps.pollIntervalMs, signal)
      } catch (err) {
        if (signal.aborted) break
        if (this.deps.isFenced(err)) {
          this.deps.readiness?.set(READINESS_CHECK, false, 'fenced by a newer poller instance')
          throw new InvalidationPollerFencedError(this.deps.transactionalId, err)
        }
        failures += 1
        const code = errorCode(err)
        this.deps.metrics.errors.inc({ code })
        const delayMs = backoffDelay(this.backoff, failures, retryAfterOf(err), this.deps.random)
        const message = err instanceof Error ? err.message : String(err)
        this.deps.readiness?.set(READINESS_CHECK, false, `${code}: ${message}`)
        const log = { err, code, failures, delayMs, cursor: this.cursor?.lastItemId }
        if (isRetriable(err))
          this.deps.logger.warn(log, 'invalidation poll failed; retrying the same page after a backoff')
        else
          this.deps.logger.error(
            log,
            'invalidation poll failed with a non-retriable error; retrying the same page after a backoff, operator attention needed',
          )
        await this.waitFor(delayMs, signal)
      }
    }
  }

  /** Whether `level` is still sent (false once the service refused it). */
  get sendsLevel(): boolean {
    return this.pager.sendsLevel
  }

  /** Reads the stored cursor, or on first start derives one (item/range or its fallback) and stores it. */
  async ensureCursor(signal?: AbortSignal): Promise<StoredCursor> {
    if (this.cursor && !this.needsRecovery) return this.cursor
    const { log, feed, feedKey, logger } = this.deps
    const stored = this.needsRecovery ? await log.recover() : await log.read()
    this.needsRecovery = false
    if (stored) {
      const rewound = await this.rewindPastHead(stored, signal)
      if (rewound) return rewound
      this.setCursor(stored)
      logger.info({ lastItemId: stored.lastItemId }, 'resuming the invalidation feed after the stored cursor')
      return stored
    }
    const start = await this.startPosition(feed, signal)
    const initial: StoredCursor = {
      feed: feedKey,
      lastItemId: start.fromId,
      feedCurrentTime: start.currentTime ?? null,
      updatedAt: this.now(),
    }
    // Stored before the first page: otherwise a restart before any item arrives
    // would derive the start again from a later moment and miss what came between.
    await this.commit([], initial)
    logger.info(
      { lastItemId: initial.lastItemId, from: start.how, ...start.log },
      `no stored cursor: starting the invalidation feed from ${start.how}`,
    )
    return initial
  }

  /**
   * A stored cursor beyond the feed's head means the feed's ids went back (a service
   * restored from a backup, a simulator started afresh on a stack that keeps the old
   * cursor): resuming after it would skip every new item up to the old id, silently.
   * So the feed is read again from id 0 (a superset, never a gap), with a warning.
   * Checked once per (re)start with item/range; without item/range, nothing is checked.
   */
  private async rewindPastHead(stored: StoredCursor, signal?: AbortSignal): Promise<StoredCursor | undefined> {
    if (stored.lastItemId === 0 || this.itemRangeMissing !== undefined) return undefined
    let head: number
    try {
      head = (await this.timed('itemRange', () => this.deps.feed.itemRange(new Date(this.now()), signal))).toId
    } catch (err) {
      if (!this.noteItemRangeUnavailable(err)) this.deps.logger.debug({ err }, 'could not read the feed head at resume')
      return undefined
    }
    if (head >= stored.lastItemId) return undefined
    const rewound: StoredCursor = { ...stored, lastItemId: 0, updatedAt: this.now() }
    await this.commit([], rewound)
    this.deps.metrics.rewinds.inc()
    this.deps.logger.warn(
      { storedLastItemId: stored.lastItemId, feedHead: head },
      'the invalidation feed ends before the stored cursor: its ids went back (a restored service or a new simulator); reading it again from id 0 so that no new item is skipped',
    )
    return rewound
  }

  /**
   * Where a first start begins: INVALIDATIONS_START_ID when set; else item/range
   * at the start moment; when item/range is unavailable or unreadable, the feed's
   * head found with `/invalidations` alone (a start moment within a few minutes
   * of now), or the whole feed from id 0 (an earlier moment: a superset of what
   * was asked for, never a gap). See docs/DECISIONS.md (issue 33).
   */
  private async startPosition(
    feed: InvalidationFeed,
    signal?: AbortSignal,
  ): Promise<{ fromId: number; currentTime?: string | undefined; how: string; log: Record<string, unknown> }> {
    if (this.deps.startId !== undefined)
      return { fromId: this.deps.startId, how: 'INVALIDATIONS_START_ID', log: {} }
    const startAt = this.deps.startAt()
    if (this.itemRangeMissing === undefined) {
      try {
        const range = await this.timed('itemRange', () => feed.itemRange(startAt, signal))
        return {
          fromId: range.fromId,
          currentTime: range.currentTime,
          how: 'item/range',
          log: { startAt: startAt.toISOString(), head: range.toId },
        }
      } catch (err) {
        if (!this.noteItemRangeUnavailable(err)) throw err
      }
    }
    if (startAt.getTime() < this.now() - RECENT_START_MS)
      return { fromId: 0, how: 'the first item (item/range unavailable, start moment in the past)', log: { startAt: startAt.toISOString() } }
    const head = await findFeedHead((fromId) => this.hasItemsAfter(fromId, signal))
    return { fromId: head.head, how: 'the feed head (item/range unavailable)', log: { probes: head.probes } }
  }

  /** True (and remembered, reported once) when `err` says item/range is unavailable or unreadable. */
  private noteItemRangeUnavailable(err: unknown): boolean {
    const unavailable = itemRangeUnavailable(err)
    if (unavailable === undefined) return false
    if (this.itemRangeMissing === undefined) {
      this.itemRangeMissing = `${unavailable.kind} (${unavailable.detail})`
      this.drift('item/range', unavailable.kind, unavailable.detail)
      this.deps.logger.warn(
        { err, kind: unavailable.kind },
        'invalidations item/range is unavailable or unreadable: not asked again by this process; a first start begins ' +
          'at INVALIDATIONS_START_ID, or the feed head found with /invalidations (start moment now), or id 0 (an earlier start moment)',
      )
    }
    return true
  }

  private async hasItemsAfter(fromId: number, signal?: AbortSignal): Promise<boolean> {
    const page = await this.pager.fetch(fromId, signal)
    return pageItems(page, fromId, this.pager.onlyLevels()).items.length > 0
  }

  private drift(field: string, kind: string, detail?: string): void {
    this.deps.onContractDrift?.({
      api: 'enrichment',
      operation: 'invalidations',
      field,
      kind,
      ...(detail === undefined ? {} : { detail }),
    })
  }

  /** Follows the feed from the cursor to its end, one committed transaction per page. */
  async drain(signal?: AbortSignal): Promise<{ pages: number; items: number }> {
    let cursor = await this.ensureCursor(signal)
    await this.measureLag(cursor, signal)
    let pages = 0
    let itemCount = 0
    /** Items published without a level or key in this drain, by what they lack: one warning per drain. */
    const incomplete = new Map<string, number>()
    const keyProblems = new Set<string>()
    for (;;) {
      if (signal?.aborted) break
      const page = await this.pager.fetch(cursor.lastItemId, signal)
      const {
        items,
        nextCursor,
        hasMore,
        currentTime,
        keyProblems: pageProblems,
        noProgress,
      } = pageItems(page, cursor.lastItemId, this.pager.onlyLevels())
      if (noProgress) {
        this.drift('paging.hasMore', 'inconsistent', 'hasMore without a cursor that moves')
        this.deps.logger.debug({ lastItemId: cursor.lastItemId }, 'feed page says hasMore but moves no cursor: drain ends here')
      }
      for (const p of keyProblems.size < 10 ? pageProblems : []) keyProblems.add(p)
      if (nextCursor > cursor.lastItemId) {
        const next: StoredCursor = {
          feed: this.deps.feedKey,
          lastItemId: nextCursor,
          feedCurrentTime: currentTime,
          updatedAt: this.now(),
        }
        await this.commit(items, next)
        cursor = next
        pages += 1
        itemCount += items.length
        this.deps.metrics.pages.inc()
        for (const item of items) {
          this.deps.metrics.items.inc({ level: item.level, type: item.type ?? 'none' })
          if (item.missing.length > 0) {
            const missing = item.missing.join(',')
            this.deps.metrics.incompleteItems.inc({ missing })
            incomplete.set(missing, (incomplete.get(missing) ?? 0) + 1)
          }
        }
        this.deps.onPageCommitted?.({ items, cursor: next })
      }
      if (!hasMore) {
        this.deps.metrics.lastCaughtUp.set(this.now() / 1000)
        this.deps.metrics.lag.set(0)
        break
      }
    }
    if (incomplete.size > 0)
      this.deps.logger.warn(
        { items: Object.fromEntries(incomplete), keyProblems: [...keyProblems], lastItemId: cursor.lastItemId },
        `invalidation feed items lack ${[...new Set([...incomplete.keys()].flatMap((m) => m.split(',')))].join(' and ')}: ` +
          'published with level "unknown" and/or an empty entity key; the refresher cannot tell which shop or merchant ' +
          'changed and re-reads table entries before they are REFRESH_MAX_AGE (one week) old instead',
      )
    if (pages > 0)
      this.deps.logger.info(
        { pages, items: itemCount, lastItemId: cursor.lastItemId },
        'invalidation feed drained',
      )
    return { pages, items: itemCount }
  }

  private async commit(items: readonly FeedItem[], next: StoredCursor): Promise<void> {
    try {
      await this.deps.log.commitPage(items, next)
    } catch (err) {
      // The transaction may or may not have committed: re-read the truth before going on.
      this.needsRecovery = true
      throw err
    }
    this.setCursor(next)
  }

  private setCursor(cursor: StoredCursor): void {
    this.cursor = cursor
    this.deps.metrics.cursor.set(cursor.lastItemId)
  }

  /** Best effort: the head only feeds the lag gauge, so its failure must not stop the poll. */
  private async measureLag(cursor: StoredCursor, signal?: AbortSignal): Promise<void> {
    if (this.itemRangeMissing !== undefined) return
    try {
      const range = await this.timed('itemRange', () =>
        this.deps.feed.itemRange(new Date(this.now()), signal),
      )
      this.deps.metrics.feedHead.set(range.toId)
      this.deps.metrics.lag.set(Math.max(0, range.toId - cursor.lastItemId))
    } catch (err) {
      if (this.noteItemRangeUnavailable(err)) return
      this.deps.logger.debug({ err }, 'could not read the feed head for the lag gauge')
    }
  }

  private async timed<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const end = this.deps.metrics.apiLatency.startTimer({ operation })
    try {
      const result = await call()
      end({ outcome: 'ok' })
      return result
    } catch (err) {
      end({ outcome: errorCode(err) })
      throw err
    }
  }

  private waitFor(ms: number, signal: AbortSignal): Promise<void> {
    if (this.wakeRequested || signal.aborted) {
      this.wakeRequested = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        signal.removeEventListener('abort', done)
        this.wake = undefined
        this.wakeRequested = false
        resolve()
      }
      const timer = setTimeout(done, ms)
      signal.addEventListener('abort', done, { once: true })
      this.wake = done
    })
  }
}
