/**
 * What the poller needs from the enrichment service's invalidation feed. The
 * production implementation adapts `@tep/enrichment-client` (see
 * `enrichment-feed.ts`); tests pass scripted fakes. Keeping the port this small
 * is what lets the cursor logic be unit-tested without HTTP.
 */

/** One batch of a feed page: consecutive items sharing a level and a type. */
export interface FeedBatch {
  /** `shop`, `merchant` or `handle` in v5 as modelled; kept as an open string. */
  level: string
  /** `update`, `delete` or `remap` as modelled; absent when the service sends none. */
  type?: string | undefined
  /** Numeric invalidation item ids. */
  ids: readonly (number | string)[]
  /** Entity keys aligned with `ids` (shop uid, merchant uid or handle). */
  keys: readonly string[]
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
  levels: readonly string[]
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
