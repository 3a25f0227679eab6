/**
 * What the poller needs from the enrichment service's invalidation feed. The
 * production implementation adapts `@tep/enrichment-client` (see
 * `enrichment-feed.ts`); tests pass scripted fakes. Keeping the port this small
 * is what lets the cursor logic be unit-tested without HTTP.
 */

/**
 * One batch of a feed page: consecutive items sharing a level and a type. The
 * interface description names only `ids`; `level`, `type` and `keys` are this
 * project's model of what the service adds, and each may be absent.
 */
export interface FeedBatch {
  /** `shop`, `merchant` or `handle` in v5 as modelled; kept as an open string; absent when not sent. */
  level?: string | undefined
  /** `update`, `delete` or `remap` as modelled; absent when the service sends none. */
  type?: string | undefined
  /** Numeric invalidation item ids. */
  ids: readonly (number | string)[]
  /**
   * Entity keys aligned with `ids` (shop uid, merchant uid or handle); absent
   * when not sent, an element undefined or empty when that item has none.
   */
  keys?: readonly (string | undefined)[] | undefined
  /** Keys were sent but unusable (e.g. not aligned with `ids`): what was wrong. */
  keysDropped?: string | undefined
}

export interface FeedPage {
  currentTime?: string | undefined
  batches: readonly FeedBatch[]
  paging: {
    /**
     * Cursor for the next call: the last id returned when `hasMore`, else the
     * highest id the service examined (so level-filtered items are not scanned again).
     */
    lastId?: number | undefined
    hasMore: boolean
    /** Newest item id known to the service when it answered, when it says so. */
    toId?: number | null | undefined
  }
}

export interface FeedPageQuery {
  /** Exclusive lower bound. */
  fromId: number
  /** The `level` parameter; undefined sends none (the service refused it: every level comes back). */
  levels?: readonly string[] | undefined
  pageSize: number
}

export interface FeedItemRange {
  /** The id just before the first item created at or after the moment: an exclusive cursor. */
  fromId: number
  /** The newest item id. */
  toId: number
  currentTime?: string | undefined
}

export interface InvalidationFeed {
  page(query: FeedPageQuery, signal?: AbortSignal): Promise<FeedPage>
  itemRange(from: Date, signal?: AbortSignal): Promise<FeedItemRange>
}
