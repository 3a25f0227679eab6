import type { FeedItem } from './page-items.ts'

/** The poller's position, as stored in the compacted cursor topic (Avro InvalidationCursor). */
export interface StoredCursor {
  /** Key of the cursor record; one per feed and level set. */
  feed: string
  lastItemId: number
  feedCurrentTime: string | null
  updatedAt: number
}

/**
 * Where the cursor lives and how a page is committed with it. The Kafka
 * implementation (`kafka-cursor-log.ts`) writes items and cursor in one
 * transaction; tests use an in-memory log.
 */
export interface CursorLog {
  /** The last committed cursor of `feed`, reading the cursor topic to its end (read committed). */
  read(): Promise<StoredCursor | undefined>
  /** Publishes `items` and `cursor` atomically: both become visible, or neither. */
  commitPage(items: readonly FeedItem[], cursor: StoredCursor): Promise<void>
  /**
   * After a failed commit whose outcome is unknown: settle whatever transaction
   * was in flight (commit or abort) and return the cursor that is really
   * committed, so the next page starts exactly there.
   */
  recover(): Promise<StoredCursor | undefined>
  close(): Promise<void>
}

/**
 * The cursor key. Levels are part of it because a position reached while
 * following only `shop` items says nothing about `handle` items below it:
 * changing the level set starts a new cursor instead of silently skipping.
 */
export function feedName(base: string, levels: readonly string[]): string {
  return `${base}:${[...new Set(levels)].sort().join(',')}`
}

/** A stable transactional id per feed: a second instance fences the first. */
export function pollerTransactionalId(feed: string): string {
  return `invalidation-poller-${feed.replace(/[^A-Za-z0-9._-]+/g, '_')}`
}
