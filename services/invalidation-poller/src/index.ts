export { startInvalidationPoller } from './start-invalidation-poller.ts'
export type { InvalidationPollerHandle, InvalidationPollerOptions } from './start-invalidation-poller.ts'
export { InvalidationPoller } from './poller.ts'
export type { InvalidationPollerDeps, PageCommitted } from './poller.ts'
export { enrichmentFeed } from './enrichment-feed.ts'
export type { FeedBatch, FeedItemRange, FeedPage, FeedPageQuery, InvalidationFeed } from './feed.ts'
export { feedName, pollerTransactionalId } from './cursor.ts'
export type { CursorLog, StoredCursor } from './cursor.ts'
export type { FeedItem } from './page-items.ts'
export { DEFAULT_POLLER_BACKOFF } from './backoff.ts'
export type { PollerBackoffPolicy } from './backoff.ts'
export {
  InvalidationFeedFormatError,
  InvalidationPageSizeError,
  InvalidationPollerConfigError,
  InvalidationPollerFencedError,
} from './errors.ts'
export { pollerEnv } from './config.ts'
