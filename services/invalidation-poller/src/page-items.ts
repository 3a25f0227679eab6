import { UNKNOWN_LEVEL } from '@tep/schemas'
import { InvalidationFeedFormatError } from './errors.ts'
import type { FeedBatch, FeedPage } from './feed.ts'

export { UNKNOWN_LEVEL }
/** Entity key published for an item the feed names no key for. */
export const NO_ENTITY_KEY = ''

/** A member of the modelled batch shape a feed item came without. */
export type MissingField = 'level' | 'keys'

/** One invalidated item, ready to be published. */
export interface FeedItem {
  itemId: number
  level: string
  type: string | null
  entityKey: string
  /** What the feed did not say about this item (empty for a fully described item). */
  missing: readonly MissingField[]
}

export interface PageItems {
  /** Items with `itemId > afterId`, ascending by id. */
  items: FeedItem[]
  /** The cursor after this page (never below `afterId`). */
  nextCursor: number
  hasMore: boolean
  currentTime: string | null
  /** Why keys of some batch were dropped (sent but unusable), for the poller's warning. */
  keyProblems: string[]
  /** The page said `hasMore` but moved the cursor nowhere: read as the end of this drain. */
  noProgress: boolean
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

/** The keys of a batch, when they can be matched to its ids one to one; else why not. */
function usableKeys(batch: FeedBatch): { keys: readonly (string | undefined)[] | undefined; problem?: string } {
  if (batch.keysDropped !== undefined) return { keys: undefined, problem: batch.keysDropped }
  if (batch.keys === undefined) return { keys: undefined }
  if (batch.keys.length !== batch.ids.length)
    return {
      keys: undefined,
      problem: `batch of level ${batch.level ?? '(none)'} has ${batch.ids.length} ids but ${batch.keys.length} keys`,
    }
  return { keys: batch.keys }
}

/**
 * Flattens one page into items in feed order and works out the next cursor.
 *
 * The feed promises `fromId < id`, but publishing is exactly-once only if the
 * poller never trusts that blindly: items at or below the cursor are dropped
 * (they were published with an earlier page), and a repeated id within a page
 * is published once. A page that claims more items but does not move the
 * cursor ends the drain (`noProgress`): following it would loop forever.
 *
 * The interface description gives a batch only `ids`. An item whose batch has
 * no `level` is published with level `unknown`, and one without a usable key
 * with an empty entity key, each marked with what it lacks: the item still
 * says that something changed, and a page that failed instead would be retried
 * forever and invalidate nothing.
 */
export function pageItems(page: FeedPage, afterId: number, only?: ReadonlySet<string>): PageItems {
  const byId = new Map<number, FeedItem>()
  const keyProblems: string[] = []
  let highestSeen = afterId
  for (const [batchIndex, batch] of page.batches.entries()) {
    const context = { batchIndex, level: batch.level, afterId }
    const { keys, problem } = usableKeys(batch)
    if (problem !== undefined) keyProblems.push(problem)
    const level = batch.level === undefined || batch.level === '' ? undefined : batch.level
    // Asked without `level` (the service refused it), the feed holds every level:
    // a named level outside the configured set is passed over, not published.
    const skip = only !== undefined && level !== undefined && !only.has(level)
    for (const [i, rawId] of batch.ids.entries()) {
      const itemId = toItemId(rawId, context)
      highestSeen = Math.max(highestSeen, itemId)
      if (skip || itemId <= afterId || byId.has(itemId)) continue
      const key = keys?.[i]
      const missing: MissingField[] = []
      if (level === undefined) missing.push('level')
      if (key === undefined || key === '') missing.push('keys')
      byId.set(itemId, {
        itemId,
        level: level ?? UNKNOWN_LEVEL,
        type: batch.type ?? null,
        entityKey: key === undefined || key === '' ? NO_ENTITY_KEY : key,
        missing,
      })
    }
  }
  const items = [...byId.values()].sort((a, b) => a.itemId - b.itemId)
  const lastId =
    page.paging.lastId === undefined ? afterId : toItemId(page.paging.lastId, { field: 'paging.lastId' })
  const nextCursor = Math.max(afterId, highestSeen, lastId)
  // "More follow" with a cursor that did not move cannot be followed (the same
  // request would return the same page forever); it is taken as the end of this
  // drain, and the next poll asks again. Failing instead would stall the feed.
  const noProgress = page.paging.hasMore && nextCursor === afterId
  return {
    items,
    nextCursor,
    hasMore: page.paging.hasMore && !noProgress,
    currentTime: page.currentTime ?? null,
    keyProblems,
    noProgress,
  }
}
