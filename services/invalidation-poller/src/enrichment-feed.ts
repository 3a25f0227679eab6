import type { EnrichmentClient, InvalidationLevel } from '@tep/enrichment-client'
import type { FeedItemRange, FeedPage, FeedPageQuery, InvalidationFeed } from './feed.ts'

/** The poller's feed port over `@tep/enrichment-client`. */
export function enrichmentFeed(
  client: Pick<EnrichmentClient, 'getInvalidations' | 'getInvalidationItemRange'>,
): InvalidationFeed {
  return {
    async page(query: FeedPageQuery, signal?: AbortSignal): Promise<FeedPage> {
      const page = await client.getInvalidations(
        {
          fromId: query.fromId,
          ...(query.levels === undefined ? {} : { level: query.levels as readonly InvalidationLevel[] }),
          pageSize: query.pageSize,
        },
        signal === undefined ? {} : { signal },
      )
      return {
        currentTime: page.currentTime,
        // Absent members stay absent: pageItems decides what an item without them means.
        batches: page.batches.map((b) => ({
          level: b.level,
          type: b.type,
          ids: b.ids,
          keys: b.keys,
          keysDropped: b.keysDropped,
        })),
        paging: { lastId: page.paging.lastId, hasMore: page.paging.hasMore, toId: page.paging.toId },
      }
    },
    async itemRange(from: Date, signal?: AbortSignal): Promise<FeedItemRange> {
      const range = await client.getInvalidationItemRange({ from }, signal === undefined ? {} : { signal })
      return { fromId: range.fromId, toId: range.toId, currentTime: range.currentTime }
    },
  }
}
