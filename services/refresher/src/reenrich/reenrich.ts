import { CORRECTION_HANDLE_INVALIDATED, CORRECTION_HEADER } from '@tep/schemas'
import { createRecordProducer, scanTopic, TOPICS, type AvroSerde, type Kafka } from '@tep/kafka'
import type { Logger } from '@tep/observability'
import { addTarget, ReenrichSelector } from './reenrich-selection.ts'

export { CORRECTION_HANDLE_INVALIDATED, CORRECTION_HEADER }

export interface ReenrichOptions {
  kafka: Kafka
  serde: AvroSerde
  /** Handles to re-enrich (treated as invalidated now). */
  handles?: readonly string[]
  /** Also (or instead) take every handle-level item published to the invalidations topic since this moment. */
  invalidationsSince?: Date
  /** Consider enriched results written since this moment; default: everything the topic retains. */
  enrichedSince?: Date
  /** Report what would be republished without writing anything. */
  dryRun?: boolean
  topics?: { invalidations?: string; enriched?: string; raw?: string }
  /** Records per send; default 500. */
  chunkSize?: number
  /** Most transactions republished by this run (the API budget); the rest are reported as `deferred`. */
  maxRepublish?: number
  /** Transactions republished by an earlier run whose new result may not be written yet: not again. */
  inFlight?: ReadonlySet<string>
  logger: Logger
  now?: () => number
}

export interface ReenrichReport {
  handles: number
  scanned: number
  republished: number
  alreadyRefreshed: number
  /** Selected but left for a later run by `maxRepublish`. */
  deferred: number
  undecodable: number
  dryRun: boolean
  /** Transaction ids republished (or that would be, in a dry run). */
  transactionIds: string[]
  /**
   * Partitions where a window given by moment (`invalidationsSince`, `enrichedSince`) may reach
   * before what the topic still holds: retention removed records of it, and the scan started at
   * the oldest one left. Empty when both windows were whole (or none was given).
   */
  retentionCut: Array<{ topic: string; partition: number; logStart: string }>
}

/**
 * Full invalidations for transaction mappings: finds the transactions whose
 * latest enrichment used an invalidated handle and sends their raw events
 * again to `transactions.raw.v1` with `refresh=true`, so transaction-ingest
 * re-runs the lookup (with refresh) and emits a new enriched result for the
 * same transactionId. Downstream consumers keep the latest result per
 * transactionId.
 *
 * The pipeline keeps no handle-to-transaction index (it would grow with every
 * transaction ever seen); this tool scans the enriched topic instead, so it
 * reaches as far back as that topic's retention. Consumers that store enriched
 * transactions longer can do the same from their own store (see README).
 */
export async function reenrichHandles(options: ReenrichOptions): Promise<ReenrichReport> {
  const { kafka, serde, logger } = options
  const now = (options.now ?? Date.now)()
  const topics = {
    invalidations: options.topics?.invalidations ?? TOPICS.merchantInvalidations,
    enriched: options.topics?.enriched ?? TOPICS.transactionsEnriched,
    raw: options.topics?.raw ?? TOPICS.transactionsRaw,
  }
  const targets = new Map<string, number>()
  for (const handle of options.handles ?? []) addTarget(targets, handle, now)
  let undecodable = 0
  const retentionCut: ReenrichReport['retentionCut'] = []
  /** A window by moment that retention cut: said at once, and in the report. */
  const noteCut = (topic: string, option: string, since: Date, cut: Array<{ partition: number; logStart: string }>): void => {
    if (cut.length === 0) return
    retentionCut.push(...cut.map((c) => ({ topic, ...c })))
    logger.warn(
      { topic, since: since.toISOString(), partitions: cut },
      `${option} ${since.toISOString()} reaches before what ${topic} still holds: retention removed records of the window on partition(s) ${cut.map((c) => c.partition).join(', ')}, read from their oldest record on`,
    )
  }

  if (options.invalidationsSince !== undefined) {
    const codec = serde.topic(topics.invalidations, 'Invalidation')
    const scanned = await scanTopic({
      kafka,
      topic: topics.invalidations,
      from: options.invalidationsSince,
      onMessage: async (message) => {
        try {
          const item = await codec.decode(message.value)
          // A handle item without a key (the feed sent only ids) names nothing to re-enrich.
          if (item.level.toLowerCase() === 'handle' && item.entityKey !== '')
            addTarget(targets, item.entityKey, item.seenAt)
        } catch (err) {
          undecodable += 1
          logger.warn(
            { err, topic: topics.invalidations, offset: message.offset },
            'skipping an undecodable invalidation',
          )
        }
      },
    })
    noteCut(topics.invalidations, '--from-invalidations', options.invalidationsSince, scanned.cutByRetention)
  }
  if (targets.size === 0) {
    logger.info({}, 'no invalidated handles: nothing to re-enrich')
    return {
      handles: 0,
      scanned: 0,
      republished: 0,
      alreadyRefreshed: 0,
      deferred: 0,
      undecodable,
      dryRun: options.dryRun ?? false,
      transactionIds: [],
      retentionCut,
    }
  }

  const selector = new ReenrichSelector(targets)
  const enrichedCodec = serde.topic(topics.enriched, 'EnrichedTransaction')
  const enrichedScan = await scanTopic({
    kafka,
    topic: topics.enriched,
    ...(options.enrichedSince === undefined ? {} : { from: options.enrichedSince }),
    onMessage: async (message) => {
      try {
        selector.offer(await enrichedCodec.decode(message.value))
      } catch (err) {
        undecodable += 1
        logger.warn(
          { err, topic: topics.enriched, offset: message.offset },
          'skipping an undecodable enriched transaction',
        )
      }
    },
  })
  if (options.enrichedSince !== undefined) noteCut(topics.enriched, '--enriched-since', options.enrichedSince, enrichedScan.cutByRetention)
  const selected = selector.result()
  const { alreadyRefreshed, scanned } = selected
  const due = selected.republish.filter((raw) => options.inFlight?.has(raw.transactionId) !== true)
  const republish = due.slice(0, options.maxRepublish ?? due.length)
  const deferred = due.length - republish.length

  if (!options.dryRun && republish.length > 0) {
    const rawCodec = serde.topic(topics.raw, 'RawTransaction')
    await rawCodec.register()
    const producer = createRecordProducer(kafka, { logger })
    try {
      const chunk = options.chunkSize ?? 500
      for (let i = 0; i < republish.length; i += chunk) {
        await producer.send(
          topics.raw,
          republish.slice(i, i + chunk).map((raw) => ({
            key: raw.transactionId,
            value: rawCodec.encodeSync(raw),
            // transaction-ingest copies it onto the new result: a correction of an earlier one.
            headers: { [CORRECTION_HEADER]: CORRECTION_HANDLE_INVALIDATED },
          })),
        )
      }
    } finally {
      await producer.close()
    }
  }
  const report: ReenrichReport = {
    handles: targets.size,
    scanned,
    republished: options.dryRun ? 0 : republish.length,
    alreadyRefreshed,
    deferred,
    undecodable,
    dryRun: options.dryRun ?? false,
    transactionIds: republish.map((r) => r.transactionId),
    retentionCut,
  }
  logger.info(
    { ...report, transactionIds: undefined },
    options.dryRun ? 'dry run: transactions that would be re-enriched' : 're-enrichment requested',
  )
  return report
}
