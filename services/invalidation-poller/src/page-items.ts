import { InvalidationFeedFormatError } from './errors.ts'
import type { FeedPage } from './feed.ts'

/** One invalidated item, ready to be published. */
export interface FeedItem {
  itemId: number
  level: string
  type: string | null
  entityKey: string
}

export interface PageItems {
  /** Items with `itemId > afterId`, ascending by id. */
  items: FeedItem[]
  /** The cursor after this page (never below `afterId`). */
  nextCursor: number
  hasMore: boolean
  currentTime: string | null
}

function toItemId(raw: number | string, context: Record<string, unknown>): number {
  const id = typeof raw === 'number' ? raw : /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(id) || id < 0) {
    throw new InvalidationFeedFormatError(
      `invalidation feed returned an item id that is not a non-negative integer: ${JSON.stringify(raw)}`,
      context,
    )
  }
  return id
}

/**
 * Flattens one page into items in feed order and works out the next cursor.
 *
 * The feed promises `fromId < id`, but publishing is exactly-once only if the
 * poller never trusts that blindly: items at or below the cursor are dropped
 * (they were published with an earlier page), and a repeated id within a page
 * is published once. A page that claims more items but does not move the
 * cursor is an error, because following it would loop forever.
 */
export function pageItems(page: FeedPage, afterId: number): PageItems {
  const byId = new Map<number, FeedItem>()
  for (const [batchIndex, batch] of page.batches.entries()) {
    const context = { batchIndex, level: batch.level, afterId }
    if (batch.keys.length !== batch.ids.length) {
      throw new InvalidationFeedFormatError(
        `invalidation feed batch ${batchIndex} (level ${batch.level}) has ${batch.ids.length} ids but ${batch.keys.length} keys; ` +
          'they must be aligned one to one',
        context,
      )
    }
    for (const [i, rawId] of batch.ids.entries()) {
      const itemId = toItemId(rawId, context)
      const entityKey = batch.keys[i]!
      if (entityKey.length === 0) {
        throw new InvalidationFeedFormatError(
          `invalidation feed item ${itemId} (level ${batch.level}) has an empty entity key`,
          { ...context, itemId },
        )
      }
      if (itemId <= afterId || byId.has(itemId)) continue
      byId.set(itemId, { itemId, level: batch.level, type: batch.type ?? null, entityKey })
    }
  }
  const items = [...byId.values()].sort((a, b) => a.itemId - b.itemId)
  const highestItem = items.at(-1)?.itemId ?? afterId
  const lastId =
    page.paging.lastId === undefined ? afterId : toItemId(page.paging.lastId, { field: 'paging.lastId' })
  const nextCursor = Math.max(afterId, highestItem, lastId)
  if (page.paging.hasMore && nextCursor === afterId) {
    throw new InvalidationFeedFormatError(
      `invalidation feed says more items follow id ${afterId} but the page moved the cursor nowhere (paging.lastId ${String(page.paging.lastId)})`,
      { afterId },
    )
  }
  return { items, nextCursor, hasMore: page.paging.hasMore, currentTime: page.currentTime ?? null }
}
