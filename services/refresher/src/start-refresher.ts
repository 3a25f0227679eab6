import { errorCode } from '@tep/errors'
import {
  createRecordProducer,
  createTransactionalPipeline,
  TOPICS,
  UNDECODABLE_CODES,
  UndecodableRecordError,
  type OutputRecord,
  type PipelineRecord,
  type RecordProducer,
} from '@tep/kafka'
import { createMetricsRegistry } from '@tep/observability'
import { attachOutputs } from './attach-outputs.ts'
import { CompactedViewTail } from './compacted-view-tail.ts'
import { enrichmentFetcher, isRecordScopedApiError } from './enrichment-fetcher.ts'
import { EntityVersions } from './entity-versions.ts'
import { UnexpectedTopicError } from './errors.ts'
import { createRefresherMetrics } from './metrics.ts'
import { MicroBatcher } from './micro-batcher.ts'
import { refreshBatch, type RefreshOutput } from './refresh-batch.ts'
import { fromFetched, fromInvalidation, type RefreshInput } from './refresh-input.ts'
import { refreshAfter } from './sweep-selection.ts'
import { Sweeper } from './sweeper.ts'
import { AgeBound, readBackUnkeyed } from './age-bound.ts'
import type { RefresherHandle, RefresherOptions, RefresherTopics } from './refresher-options.ts'
import { AutoReenricher, reenrichObserver } from './reenrich/auto-reenrich.ts'
import { RefresherConfigError } from './errors.ts'


const PIPELINE_CHECK = 'refresh-pipeline'
/** Records per transaction, and transformed together: the window of coalescing. */
const CHUNK = 500

/**
 * Starts the refresher: the single writer of the compacted shop and merchant
 * topics. Reads them back first (ready once caught up), then consumes
 * invalidations and ingest's fetched snapshots in one transactional pipeline.
 */
export async function startRefresher(options: RefresherOptions): Promise<RefresherHandle> {
  const topics: RefresherTopics = {
    invalidations: TOPICS.merchantInvalidations,
    fetched: TOPICS.merchantFetched,
    shops: TOPICS.merchantShops,
    merchants: TOPICS.merchantMerchants,
    dlq: TOPICS.transactionsDlq,
    enriched: TOPICS.transactionsEnriched,
    raw: TOPICS.transactionsRaw,
    ...options.topics,
  }
  const { kafka, serde, logger } = options
  const now = options.now ?? Date.now
  const registry = options.registry ?? createMetricsRegistry({ service: 'refresher', defaultMetrics: false })
  const metrics = createRefresherMetrics(registry)
  const refreshAfterMs = refreshAfter(
    options.maxAgeMs,
    options.sweepIntervalMs,
    options.sweepMarginMs ?? 3_600_000,
  )
  const views = { shop: new EntityVersions(), merchant: new EntityVersions() }
  const fetcher =
    options.fetcher ??
    (options.client === undefined
      ? undefined
      : enrichmentFetcher(options.client, (operation, outcome, seconds) =>
          metrics.apiLatency.observe({ operation, outcome }, seconds),
        ))
  if (fetcher === undefined) throw new RefresherConfigError('startRefresher needs a client (or a fetcher)')

  const codecs = {
    invalidation: serde.topic(topics.invalidations, 'Invalidation'),
    fetched: serde.topic(topics.fetched, 'MerchantDataFetched'),
    shop: serde.topic(topics.shops, 'Shop'),
    merchant: serde.topic(topics.merchants, 'Merchant'),
  }
  await Promise.all([codecs.shop.register(), codecs.merchant.register(), codecs.invalidation.register()])

  const tail = new CompactedViewTail({
    kafka,
    views,
    shops: { topic: topics.shops, codec: codecs.shop },
    merchants: { topic: topics.merchants, codec: codecs.merchant },
    logger,
    ...(options.readiness === undefined ? {} : { readiness: options.readiness }),
  })
  const updateTableSize = () => {
    metrics.tableSize.set({ entity: 'shop' }, views.shop.liveCount)
    metrics.tableSize.set({ entity: 'merchant' }, views.merchant.liveCount)
  }
  await tail.start()
  updateTableSize()
  logger.info(
    { shops: views.shop.liveCount, merchants: views.merchant.liveCount },
    'compacted topics read; refresher view ready',
  )

  const batcher = new MicroBatcher<RefreshInput, RefreshOutput>(async (inputs) => {
    // After a rebalance the previous owner of a partition may have written versions not read yet.
    await tail.whenCaughtUp()
    const { outputs, stats } = await refreshBatch(inputs, {
      views,
      fetcher,
      now,
      refreshAfterMs,
      concurrency: options.fetchConcurrency ?? 8,
      isRecordScoped: options.isRecordScoped ?? isRecordScopedApiError,
      onRecordScopedError: (entity, key, err) =>
        logger.warn({ err, entity, key }, 'the API refuses this uid; no refresh for it'),
    })
    for (const u of stats.unkeyed) {
      metrics.unkeyed.inc({ level: u.level })
      noteUnkeyed(u.seenAt, u.itemId)
    }
    metrics.fetched.inc(stats.fetched)
    for (const w of stats.written) {
      if (w.tombstone) metrics.tombstoned.inc({ entity: w.entity })
      else metrics.refreshed.inc({ entity: w.entity, source: w.source })
    }
    for (const s of stats.skipped) metrics.skipped.inc({ entity: s.entity, reason: s.reason })
    if (stats.written.length > 0) logger.debug({ written: stats.written }, 'refreshed')
    return attachOutputs(inputs, outputs)
  })

  async function decode(record: PipelineRecord): Promise<RefreshInput> {
    if (record.topic === topics.invalidations)
      return fromInvalidation(await codecs.invalidation.decode(record.value))
    if (record.topic === topics.fetched) {
      const input = fromFetched(await codecs.fetched.decode(record.value), Number(record.timestamp))
      // A snapshot that contradicts its own envelope breaks the contract: DLQ, not a silent skip.
      if (input.kind === 'ignored')
        throw new UndecodableRecordError(input.detail, UNDECODABLE_CODES.schemaInvalid)
      return input
    }
    throw new UnexpectedTopicError(record.topic)
  }

  function encode(output: RefreshOutput): OutputRecord {
    if (output.entity === 'shop')
      return {
        topic: topics.shops,
        key: output.key,
        value: output.value === null ? null : codecs.shop.encodeSync(output.value),
      }
    return {
      topic: topics.merchants,
      key: output.key,
      value: output.value === null ? null : codecs.merchant.encodeSync(output.value),
    }
  }

  const readiness = options.readiness
  readiness?.register(PIPELINE_CHECK, 'joining the consumer group')
  const pipeline = createTransactionalPipeline({
    kafka,
    groupId: options.groupId ?? 'refresher',
    topics: [topics.invalidations, topics.fetched],
    transactionalIdPrefix: options.transactionalIdPrefix ?? 'refresher',
    dlqTopic: topics.dlq,
    // Every record of a chunk is transformed at once so the micro-batcher sees
    // the whole chunk; API concurrency is bounded separately (fetchConcurrency).
    concurrency: CHUNK,
    maxRecordsPerTransaction: CHUNK,
    // One partition at a time: the newest-wins decision for a key must see the
    // write of the previous batch that touched it (the fetched and invalidation
    // topics carry the same key in different partitions).
    partitionsConsumedConcurrently: 1,
    ...(options.consumer === undefined ? {} : { consumer: options.consumer }),
    ...(options.retryPolicy === undefined ? {} : { retryPolicy: options.retryPolicy }),
    logger,
    transform: async (record) => {
      const outputs = await batcher.submit(await decode(record))
      return outputs.map(encode)
    },
    hooks: {
      onAssigned: () => {
        // Not awaited here: the next batch awaits it (whenCaughtUp).
        tail
          .catchUp()
          .catch((err: unknown) =>
            logger.warn({ err }, 'catching up the compacted topics after an assignment failed'),
          )
        readiness?.set(PIPELINE_CHECK, true)
      },
      onCommitted: (e) => {
        metrics.committed.inc({ topic: e.topic }, e.records)
        updateTableSize()
        readiness?.set(PIPELINE_CHECK, true)
      },
      onDeadLettered: (e) => metrics.deadLettered.inc({ topic: e.topic, code: e.code }),
      onPaused: (e) => {
        metrics.paused.inc({ code: e.code })
        readiness?.set(
          PIPELINE_CHECK,
          false,
          `${e.topic}/${e.partition} paused after ${errorCode(e.error)} (attempt ${e.attempt})`,
        )
      },
      onResumed: () => readiness?.set(PIPELINE_CHECK, true),
      onCrash: (e) =>
        readiness?.set(
          PIPELINE_CHECK,
          false,
          `${e.restart ? 'Kafka consumer being re-created after' : 'consumer stopped after'}: ${e.error instanceof Error ? e.error.message : String(e.error)}`,
        ),
      onRecovered: () => readiness?.set(PIPELINE_CHECK, true),
    },
  })

  // Declared before the pipeline starts: a batch can reach noteUnkeyed while startRefresher still runs.
  let stopping: Promise<void> | undefined
  let sweepProducer: RecordProducer | undefined
  let sweeper: Sweeper | undefined
  const ageBound = new AgeBound(options.maxAgeMs)
  /**
   * An item that names no entity: for what the table holds now the refresher is
   * a client without invalidations (one-week rule), so the sweep runs until
   * `maxAgeMs` after the newest such item (age-bound.ts).
   */
  function noteUnkeyed(seenAt: number, itemId: number): void {
    // A batch still in flight while stop() runs must not start a sweeper nothing would stop.
    if (!options.invalidationsEnabled || stopping !== undefined) return
    const started = ageBound.note(seenAt, now())
    metrics.ageBoundUntil.set(ageBound.until / 1000)
    if (!started) return
    logger.warn(
      { itemId, ageBoundUntil: new Date(ageBound.until).toISOString(), refreshAfterMs },
      'invalidation items name no shop or merchant (the feed sent no level or keys): cannot tell what changed, ' +
        'so entries are re-read before they are REFRESH_MAX_AGE old, as without invalidations',
    )
    makeSweeper().then(
      (s) => s.start(),
      (err: unknown) => logger.error({ err }, 'could not start the age-bound sweep'),
    )
  }
  const makeSweeper = async () => {
    if (sweeper !== undefined) return sweeper
    sweepProducer = createRecordProducer(kafka, { logger })
    sweeper = new Sweeper({
      views,
      producer: sweepProducer,
      codec: codecs.invalidation,
      topic: topics.invalidations,
      intervalMs: options.sweepIntervalMs,
      refreshAfterMs,
      maxPerSweep: options.sweepMaxPerRun ?? 10_000,
      logger,
      now,
      ...(options.invalidationsEnabled
        ? {
            active: () => ageBound.active(now()),
            onIdle: () =>
              logger.info(
                { ageBoundUntil: new Date(ageBound.until).toISOString() },
                'no invalidation without a key for REFRESH_MAX_AGE: the age-bound sweep ends, entries are kept until invalidated',
              ),
          }
        : {}),
      onSweep: (r) => {
        for (const entity of ['shop', 'merchant'] as const) {
          metrics.sweepStale.set({ entity }, r.stale[entity])
          metrics.sweepRequested.inc({ entity }, r.requested[entity])
        }
        metrics.sweepLast.set(now() / 1000)
      },
    })
    return sweeper
  }

  try {
    await pipeline.start()
    if (!options.invalidationsEnabled) {
      ;(await makeSweeper()).start()
      logger.info(
        { refreshAfterMs, sweepIntervalMs: options.sweepIntervalMs },
        'invalidations disabled: sweeping entries older than the refresh age',
      )
    }
  } catch (err) {
    await pipeline.stop().catch(() => undefined)
    await tail.stop().catch(() => undefined)
    await sweepProducer?.close().catch(() => undefined)
    throw err
  }

  let reenricher: AutoReenricher | undefined
  if (options.reenrichHandles !== undefined) {
    const r = options.reenrichHandles
    reenricher = new AutoReenricher({
      kafka,
      serde,
      topics: { invalidations: topics.invalidations, enriched: topics.enriched, raw: topics.raw },
      intervalMs: r.intervalMs,
      maxPerRun: r.maxPerRun,
      firstLookbackMs: r.firstLookbackMs ?? 3_600_000,
      ...(r.enrichedWindowMs === undefined ? {} : { enrichedWindowMs: r.enrichedWindowMs }),
      logger,
      now,
      ...reenrichObserver(metrics, logger, now),
    })
    reenricher.start()
  }

  const rescanAbort = new AbortController()
  const rescan: Promise<void> =
    options.invalidationsEnabled && options.rescanUnkeyedOnStart !== false
      ? readBackUnkeyed({
          kafka,
          topic: topics.invalidations,
          codec: codecs.invalidation,
          from: new Date(now() - options.maxAgeMs),
          signal: rescanAbort.signal,
          onUnkeyed: noteUnkeyed,
          logger,
        })
      : Promise.resolve()

  return {
    views,
    whenAssigned: () => pipeline.whenAssigned(),
    sweepNow: async () => (await makeSweeper()).sweepOnce(),
    ageBoundUntil: () => ageBound.until,
    whenRescanned: () => rescan,
    reenrichNow: async () => {
      if (reenricher === undefined)
        throw new RefresherConfigError('reenrichNow needs the reenrichHandles option (REENRICH_HANDLES=true)')
      return reenricher.runOnce()
    },
    stop() {
      stopping ??= (async () => {
        rescanAbort.abort()
        await rescan
        await reenricher?.stop()
        // The pipeline first: its last batches may still note unkeyed items (noteUnkeyed checks `stopping`).
        await pipeline.stop()
        await sweeper?.stop()
        await tail.stop()
        await sweepProducer?.close()
      })()
      return stopping
    },
  }
}
