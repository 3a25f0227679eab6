import { counter, gauge, histogram, type Registry } from '@tep/observability'

export interface PollerMetrics {
  pages: ReturnType<typeof counter>
  items: ReturnType<typeof counter>
  cursor: ReturnType<typeof gauge>
  feedHead: ReturnType<typeof gauge>
  lag: ReturnType<typeof gauge>
  apiLatency: ReturnType<typeof histogram>
  errors: ReturnType<typeof counter>
  pageSize: ReturnType<typeof gauge>
  lastCaughtUp: ReturnType<typeof gauge>
  incompleteItems: ReturnType<typeof counter>
  rewinds: ReturnType<typeof counter>
}

export function createPollerMetrics(registry: Registry): PollerMetrics {
  return {
    pages: counter(
      registry,
      'tep_invalidation_poller_pages_total',
      'Feed pages committed to Kafka (items and cursor in one transaction)',
    ),
    items: counter(
      registry,
      'tep_invalidation_poller_items_total',
      'Invalidation items published, by level and type',
      ['level', 'type'],
    ),
    cursor: gauge(
      registry,
      'tep_invalidation_poller_cursor_item_id',
      'Last committed feed item id (the cursor)',
    ),
    feedHead: gauge(
      registry,
      'tep_invalidation_poller_feed_head_item_id',
      'Newest feed item id the service reported (item/range toId), when known',
    ),
    lag: gauge(
      registry,
      'tep_invalidation_poller_lag_items',
      'Feed head minus cursor, measured at the start of each run (ids; level-filtered items count too)',
    ),
    apiLatency: histogram(
      registry,
      'tep_invalidation_poller_api_seconds',
      'Latency of feed requests, by operation and outcome',
      ['operation', 'outcome'],
    ),
    errors: counter(
      registry,
      'tep_invalidation_poller_errors_total',
      'Failures of the poll loop, by error code',
      ['code'],
    ),
    rewinds: counter(
      registry,
      'tep_invalidation_poller_rewinds_total',
      'Resumes whose stored cursor lay beyond the feed head (the ids went back): the feed was read again from id 0',
    ),
    pageSize: gauge(
      registry,
      'tep_invalidation_poller_page_size',
      'Page size currently requested (halved after a pageSize 400)',
    ),
    lastCaughtUp: gauge(
      registry,
      'tep_invalidation_poller_last_caught_up_seconds',
      'Unix time at which the poller last reached the end of the feed',
    ),
    incompleteItems: counter(
      registry,
      'tep_invalidation_poller_incomplete_items_total',
      'Items published without the level or entity key the pipeline would use (level unknown / empty key), by the fields missing',
      ['missing'],
    ),
  }
}
