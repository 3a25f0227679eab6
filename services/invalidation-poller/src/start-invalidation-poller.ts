import { isFencedError, TOPICS, type AvroSerde, type Kafka } from '@tep/kafka'
import {
  createMetricsRegistry,
  type ContractDriftListener,
  type Logger,
  type Readiness,
  type Registry,
} from '@tep/observability'
import type { PollerBackoffPolicy } from './backoff.ts'
import { feedName, pollerTransactionalId, type StoredCursor } from './cursor.ts'
import type { InvalidationFeed } from './feed.ts'
import { KafkaCursorLog } from './kafka-cursor-log.ts'
import { createPollerMetrics } from './metrics.ts'
import { InvalidationPoller, type PageCommitted } from './poller.ts'

export interface InvalidationPollerOptions {
  kafka: Kafka
  serde: AvroSerde
  /** The feed; `enrichmentFeed(client)` in production. */
  feed: InvalidationFeed
  levels: readonly string[]
  pageSize: number
  pollIntervalMs: number
  /** Where to start when no cursor is stored yet. */
  startAt: Date | (() => Date)
  /** Exclusive start id when no cursor is stored yet (INVALIDATIONS_START_ID); item/range is then not asked. */
  startId?: number
  /** Told of every tolerated deviation of the feed (the one the enrichment client was given, too). */
  onContractDrift?: ContractDriftListener
  /** Base of the cursor key and transactional id; default `enrichment-v5`. */
  feedBase?: string
  /** Override the derived transactional id (it must stay the same across restarts). */
  transactionalId?: string
  topics?: { items?: string; cursor?: string }
  logger: Logger
  registry?: Registry
  readiness?: Readiness
  backoff?: Partial<PollerBackoffPolicy>
  onPageCommitted?: (page: PageCommitted) => void
}

export interface InvalidationPollerHandle {
  readonly feed: string
  readonly transactionalId: string
  /** The committed position (known once start resolved, unless the API was down on a first start). */
  position(): StoredCursor | undefined
  /** Ends the current wait and polls now. */
  pollNow(): void
  /** Settles when the loop ends: resolves after `stop()`, rejects when fenced by a newer instance. */
  readonly done: Promise<void>
  /** Lets the page in flight commit (or not), then closes the producer. Idempotent. */
  stop(): Promise<void>
}

/**
 * Starts following the invalidation feed in the background. Exactly one poller
 * per feed may be active: starting a second instance fences the first, whose
 * `done` then rejects with INVALIDATION_POLLER_FENCED.
 */
export async function startInvalidationPoller(
  options: InvalidationPollerOptions,
): Promise<InvalidationPollerHandle> {
  const feed = feedName(options.feedBase ?? 'enrichment-v5', options.levels)
  const transactionalId = options.transactionalId ?? pollerTransactionalId(feed)
  const itemsTopic = options.topics?.items ?? TOPICS.merchantInvalidations
  const cursorTopic = options.topics?.cursor ?? TOPICS.merchantInvalidationsCursor
  const registry =
    options.registry ?? createMetricsRegistry({ service: 'invalidation-poller', defaultMetrics: false })
  const logger = options.logger.child({ feed, transactionalId })
  const log = new KafkaCursorLog({
    kafka: options.kafka,
    transactionalId,
    feed,
    itemsTopic,
    cursorTopic,
    itemCodec: options.serde.topic(itemsTopic, 'Invalidation'),
    cursorCodec: options.serde.topic(cursorTopic, 'InvalidationCursor'),
    logger,
  })
  const startAt = options.startAt
  const poller = new InvalidationPoller({
    feed: options.feed,
    log,
    feedKey: feed,
    transactionalId,
    levels: options.levels,
    pageSize: options.pageSize,
    pollIntervalMs: options.pollIntervalMs,
    startAt: typeof startAt === 'function' ? startAt : () => startAt,
    logger,
    metrics: createPollerMetrics(registry),
    isFenced: isFencedError,
    ...(options.readiness === undefined ? {} : { readiness: options.readiness }),
    ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
    ...(options.onPageCommitted === undefined ? {} : { onPageCommitted: options.onPageCommitted }),
    ...(options.startId === undefined ? {} : { startId: options.startId }),
    ...(options.onContractDrift === undefined ? {} : { onContractDrift: options.onContractDrift }),
  })
  // Fence any previous instance before anything else: its open transaction is
  // aborted now, so the cursor read next is final.
  await log.connect()
  try {
    // Known position before start resolves; when it cannot be had now (API down
    // on a first start), the loop keeps trying with backoff.
    await poller.ensureCursor()
  } catch (err) {
    logger.warn({ err }, 'could not establish the cursor yet; the poll loop retries')
  }
  const controller = new AbortController()
  const done = poller.run(controller.signal).finally(() => log.close())
  // The caller observes `done`; keep an unobserved rejection from crashing the process first.
  done.catch(() => undefined)
  let stopping: Promise<void> | undefined
  return {
    feed,
    transactionalId,
    position: () => poller.position,
    pollNow: () => poller.pollNow(),
    done,
    stop() {
      stopping ??= (async () => {
        controller.abort()
        await done.catch((err: unknown) => logger.warn({ err }, 'poller ended with an error before stop'))
      })()
      return stopping
    },
  }
}
