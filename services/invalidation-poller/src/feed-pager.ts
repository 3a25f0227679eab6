import type { Logger } from '@tep/observability'
import { InvalidationPageSizeError } from './errors.ts'
import type { FeedPage, InvalidationFeed } from './feed.ts'
import type { PollerMetrics } from './metrics.ts'
import { blamedParameter, statusOf } from './negotiation.ts'
import type { PageSize } from './page-size.ts'

export interface FeedPagerDeps {
  feed: InvalidationFeed
  levels: readonly string[]
  pageSize: PageSize
  logger: Logger
  metrics: Pick<PollerMetrics, 'pageSize'>
  drift: (field: string, kind: string, detail?: string) => void
  timed: <T>(operation: string, call: () => Promise<T>) => Promise<T>
}

/**
 * Asks the feed for pages with the parameters the service accepts: what it
 * refused (`level`, a page size) is negotiated away and remembered for the
 * process, so a plausible refusal never stalls the poller (docs/DECISIONS.md, issue 33).
 */
export class FeedPager {
  private readonly deps: FeedPagerDeps
  /** The service refused `level` (remembered for the process): pages are asked for without it. */
  private levelRefused = false

  constructor(deps: FeedPagerDeps) {
    this.deps = deps
  }

  /** Whether `level` is still sent (false once the service refused it). */
  get sendsLevel(): boolean {
    return !this.levelRefused
  }

  /** The configured levels, when they have to be applied here because the service refused `level`. */
  onlyLevels(): ReadonlySet<string> | undefined {
    return this.levelRefused ? new Set(this.deps.levels) : undefined
  }

  /**
   * One page, negotiating what the service refuses with a 400 instead of
   * stalling on it. A 400 that names `level` drops the parameter for the
   * process. One that names `pageSize` halves the page size. An unattributed 400
   * is tried again without `level`: if that is served, `level` was the cause;
   * if not, the page size is halved (and `level` tried again at the new size).
   * Only when even page size 1 without `level` is refused does the poller give
   * up on this page (retried after the backoff).
   */
  async fetch(fromId: number, signal?: AbortSignal): Promise<FeedPage> {
    let probingWithoutLevel = false
    for (;;) {
      const pageSize = this.deps.pageSize.current
      const sendLevel = !this.levelRefused && !probingWithoutLevel
      try {
        const page = await this.deps.timed('page', () =>
          this.deps.feed.page({ fromId, pageSize, ...(sendLevel ? { levels: this.deps.levels } : {}) }, signal),
        )
        if (probingWithoutLevel) this.refuseLevel('a 400 that was not repeated without level')
        if (this.deps.pageSize.succeeded()) {
          this.deps.metrics.pageSize.set(this.deps.pageSize.current)
          this.deps.logger.info({ pageSize: this.deps.pageSize.current }, 'invalidation pages served again: page size doubled')
        }
        return page
      } catch (err) {
        if (statusOf(err) !== 400) throw err
        const blamed = blamedParameter(err)
        if (sendLevel && blamed === 'level') {
          this.refuseLevel('a 400 naming level', err)
          continue
        }
        if (sendLevel && blamed === undefined) {
          probingWithoutLevel = true
          continue
        }
        probingWithoutLevel = false
        if (!this.deps.pageSize.halve()) {
          throw new InvalidationPageSizeError(
            `the enrichment service rejects invalidation pages (400) even with pageSize ${pageSize}` +
              `${this.levelRefused ? ' and without level' : ''}; check INVALIDATIONS_LEVELS (${this.deps.levels.join(',')}) and the cursor ${fromId}`,
            { cause: err, details: { pageSize, fromId, levels: this.deps.levels, levelSent: !this.levelRefused } },
          )
        }
        this.deps.metrics.pageSize.set(this.deps.pageSize.current)
        this.deps.logger.warn(
          { err, rejected: pageSize, next: this.deps.pageSize.current },
          'invalidation page rejected with 400: halving the page size',
        )
      }
    }
  }

  /** From now on pages are asked for without `level`; items are filtered here (one warning, drift counted). */
  private refuseLevel(evidence: string, err?: unknown): void {
    if (this.levelRefused) return
    this.levelRefused = true
    this.deps.drift('level', 'param-refused', evidence)
    this.deps.logger.warn(
      { err, evidence, levels: this.deps.levels },
      'the enrichment service refuses the level parameter of /v5/invalidations: asking without it from now on ' +
        '(this process); items of other levels are passed over here, items without a level are published as level unknown',
    )
  }
}
