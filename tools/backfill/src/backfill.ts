import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry'
import { createTransactionalWriter, OffsetReader, TOPICS, type Kafka, type KafkaLogger } from '@tep/kafka'
import type { EnrichmentPort } from '@tep/transaction-ingest'
import {
  backfillTopics,
  ensureBackfillTopics,
  readLedger,
  readStates,
  stateMessage,
  STATE_TOPIC,
  type BackfillState,
  type LedgerEntry,
} from './backfill-topics.ts'
import { dryRun } from './dry-run.ts'
import type { RetentionGap } from './errors.ts'
import { OvertakenGaps } from './overtaken-gaps.ts'
import { loadFile } from './file-loader.ts'
import type { BackfillInput } from './backfill-input.ts'
import { formatOf, InputFileError } from './file-rows.ts'
import { createEnrichmentStep, startEnricher, type EnrichmentTopics } from './enrichment-step.ts'
import { guardedClient, LiveGuard, type YieldSummary } from './live-guard.ts'
import { DEFAULT_YIELD_POLICY, type YieldPolicy } from './yield-policy.ts'
import type { ProgressReporter } from './progress.ts'
import { checkedRange, topicRangeState } from './topic-range.ts'
import { lastRowOffsets, resumeOffset, summarise, writeRejects } from './ledger-summary.ts'
import { chooseRun, identify } from './backfill-identity.ts'
import { withUnreadGaps } from './unread-gaps.ts'

export type { BackfillInput } from './backfill-input.ts'

/** What a caller gets told about each enrichment API answer (for the latency check). */
export interface ApiHooks {
  onResponse(info: { durationMs: number }): void
}

export interface BackfillOptions {
  kafka: Kafka
  schemaRegistry: SchemaRegistry
  /** Builds the backfill's own enrichment client (own budget) with these hooks. */
  createClient: (hooks: ApiHooks) => EnrichmentPort & { close?: () => Promise<void> }
  input: BackfillInput
  /** Enriched results go here; default transactions.enriched.v1. */
  toTopic?: string
  /** Table and fetched-snapshot topics; default the catalog's. */
  topics?: Partial<Omit<EnrichmentTopics, 'enriched'>>
  stateTopic?: string
  /** Default `<file>.rejects.jsonl` (file input) or `backfill-<id>.rejects.jsonl`. */
  rejectsPath?: string
  again?: boolean
  dryRun?: boolean
  /** Partitions of the per-backfill rows topic (parallel enrichment); default 4. */
  partitions?: number
  /** Rows of one partition enriched at the same time; default 500. */
  concurrency?: number
  live?: {
    group?: string
    topic?: string
    /** Stop while the live lag is at least this many records (YieldPolicy.stopLagRecords). */
    maxLag?: number
    maxApiLatencyMs?: number
    intervalMs?: number
    /** The rest of the yield policy (targetLagMs, stopLagMs, decrease, increase, minShare). */
    policy?: Partial<YieldPolicy>
  }
  /** API calls in flight at full share (the client's own limiter bounds them too); default 16. */
  apiSlots?: number
  progress?: ProgressReporter
  instanceId?: string
  consumer?: { sessionTimeout?: number; heartbeatInterval?: number; maxWaitTimeInMs?: number }
  logger?: KafkaLogger
  /** Aborting stops the backfill cleanly; the same command resumes it. */
  signal?: AbortSignal
}

export interface BackfillReport {
  backfillId: string
  source: string
  dryRun: boolean
  /** True when an earlier run of this backfill had already done part of it. */
  resumed: boolean
  /** False when stopped (signal) before the end; run the same command again to continue. */
  complete: boolean
  rows: number
  enriched: { matched: number; notFound: number; rejectedByApi: number }
  /** Rows that could not become a raw event (see the rejects file). */
  rejected: number
  rejectsByCode: Record<string, number>
  rejectsFile: string | null
  /** Rows with no outcome, and rows with more than one (both 0 unless something is broken). */
  lost: number
  duplicated: number
  /** Rows processed by this run (the rest by earlier runs). */
  rowsThisRun: number
  durationMs: number
  rowsPerSecond: number
  /** Times this run started yielding to live traffic. */
  yields: number
  /** How much it yielded: time below its full share and stopped, and its mean share (1 = never slowed). */
  yielding: YieldSummary
  enrichedTopic: string
  /** Topic source run with --accept-retention-gap: partitions whose range may have lost records to retention (see RetentionGap). */
  retentionGaps: RetentionGap[]
}

export const DEFAULTS = {
  partitions: 4,
  concurrency: 500,
  liveGroup: 'transaction-ingest',
  liveTopic: TOPICS.transactionsRaw,
  maxLiveLag: DEFAULT_YIELD_POLICY.stopLagRecords,
  maxApiLatencyMs: DEFAULT_YIELD_POLICY.maxApiLatencyMs,
  liveIntervalMs: DEFAULT_YIELD_POLICY.intervalMs,
  targetLagMs: DEFAULT_YIELD_POLICY.targetLagMs,
  stopLagMs: DEFAULT_YIELD_POLICY.stopLagMs,
} as const

export async function runBackfill(options: BackfillOptions): Promise<BackfillReport> {
  const started = Date.now()
  const { kafka, input } = options
  const logger = options.logger
  const format = input.kind === 'file' ? (input.format ?? formatOf(input.path)) : undefined
  if (input.kind === 'file' && format === undefined)
    throw new InputFileError(`${input.path}: cannot tell the format from the name; give --format csv or --format jsonl`)
  const identity = await identify(input)
  const base = identity.sha256.slice(0, 16)
  const defaultRejects = (id: string): string =>
    input.kind === 'file' ? `${input.path}.rejects.jsonl` : `backfill-${id}.rejects.jsonl`

  if (options.dryRun === true) {
    const rejectsPath = options.rejectsPath ?? defaultRejects(base)
    // The range is checked as a real run checks it: a dry run is refused where the run would be.
    // A topic range already started (a killed or stopped run) is checked as its resume checks it:
    // its stored ranges against where its group reads next, not as a new range. A file dry run
    // stays offline (no state read): it only validates the file.
    let retentionGaps: RetentionGap[] = []
    let resumes: string | undefined
    if (input.kind === 'topic') {
      const run = chooseRun(base, await readStates(kafka, options.stateTopic ?? STATE_TOPIC), options.again === true)
      const reader = new OffsetReader(kafka)
      try {
        if (run.state !== undefined) {
          resumes = run.id
          retentionGaps = (await withUnreadGaps(reader, input, `backfill-${run.id}`, run.state)).retentionGaps ?? []
        } else {
          const offsets = await reader.topicOffsets(input.topic, { readCommitted: true })
          retentionGaps = (await checkedRange(reader, input, offsets)).gaps
        }
      } finally {
        await reader.close()
      }
    }
    const result = await dryRun({ input, format, kafka, rejectsPath, schemaRegistry: options.schemaRegistry })
    return {
      backfillId: resumes ?? base,
      source: identity.source,
      dryRun: true,
      resumed: resumes !== undefined,
      complete: true,
      rows: result.rows,
      enriched: { matched: 0, notFound: 0, rejectedByApi: 0 },
      rejected: result.rejected,
      rejectsByCode: result.rejectsByCode,
      rejectsFile: result.rejected > 0 ? rejectsPath : null,
      lost: 0,
      duplicated: 0,
      rowsThisRun: result.rows,
      durationMs: Date.now() - started,
      rowsPerSecond: rate(result.rows, Date.now() - started),
      yields: 0,
      yielding: { yields: 0, slowedMs: 0, stoppedMs: 0, meanShare: 1 },
      enrichedTopic: options.toTopic ?? TOPICS.transactionsEnriched,
      retentionGaps,
    }
  }

  const stateTopic = options.stateTopic ?? STATE_TOPIC
  const states = await readStates(kafka, stateTopic)
  const run = chooseRun(base, states, options.again === true)
  const backfillId = run.id
  const topics = backfillTopics(backfillId, stateTopic)
  const rejectsPath = options.rejectsPath ?? defaultRejects(backfillId)
  const enrichmentTopics: EnrichmentTopics = {
    enriched: options.toTopic ?? TOPICS.transactionsEnriched,
    fetched: options.topics?.fetched ?? TOPICS.merchantFetched,
    shops: options.topics?.shops ?? TOPICS.merchantShops,
    merchants: options.topics?.merchants ?? TOPICS.merchantMerchants,
  }

  // The ledger has the partitions of the input, and each input partition writes only its own
  // ledger partition: one transactional id per ledger partition, so counting the committed
  // ledger at start is exact even when a killed run left a transaction open.
  let partitions = options.partitions ?? DEFAULTS.partitions
  let state: BackfillState
  let prior: LedgerEntry[]
  const admin = new OffsetReader(kafka)
  try {
    if (input.kind === 'topic') {
      const offsets = await admin.topicOffsets(input.topic, { readCommitted: true })
      partitions = offsets.length
      state = run.state ?? (await topicRangeState(admin, input, backfillId, identity, offsets))
    } else {
      state = run.state ?? {
        backfillId,
        kind: 'file',
        source: identity.source,
        sha256: identity.sha256,
        loadedThroughLine: 0,
        loadedRows: 0,
        loadComplete: false,
        startedAt: Date.now(),
        finishedAt: null,
      }
    }
    await ensureBackfillTopics(kafka, topics, partitions, input.kind === 'file')
    // What an earlier run of this backfill did: its progress count, and where a topic run whose
    // group offsets expired reads on (below).
    prior = run.state === undefined ? [] : await readLedger(kafka, topics.ledger)
    if (input.kind === 'topic') {
      // The group starts at the range's first offsets; a resumed one where it committed. A partition
      // without a committed offset on resume is one whose group offsets expired while no run was
      // alive (offsets.retention.minutes, 7 days by default): the consumer would start it at the
      // log's start, before the range. It starts after the last row its ledger holds instead.
      // Kafka answers "coordinator loading" for a while on a fresh group coordinator: retried.
      const ranges = state.ranges ?? []
      const resumed = run.state !== undefined
      const done = lastRowOffsets(prior)
      await retrying(async () => {
        const committed = await admin.committedOffsets(`backfill-${backfillId}`, input.topic)
        const missing = ranges.filter((r) => !committed.has(r.partition))
        if (missing.length === 0) return
        await admin.setCommittedOffsets(
          `backfill-${backfillId}`,
          input.topic,
          missing.map((r) => ({ partition: r.partition, offset: resumeOffset(BigInt(r.start), done.get(r.partition)) })),
        )
        if (resumed) logger?.warn({ backfillId, partitions: missing.map((r) => r.partition) }, 'no committed offsets on resume (expired?): reading on after the ledger\'s last row')
      })
      if (!resumed) await writeState(kafka, stateTopic, state, logger)
      // A stored range is not checked again above: retention may have removed records a killed run
      // had not read. Accepted gaps are stored: once read past, the offsets no longer show them.
      const checked = await retrying(() => withUnreadGaps(admin, input, `backfill-${backfillId}`, state))
      if (checked !== state) {
        state = checked
        await writeState(kafka, stateTopic, state, logger)
      }
    }
  } finally {
    await admin.close()
  }

  let processed = new Set(prior.map((e) => e.row)).size
  const priorProcessed = processed
  logger?.info(
    { backfillId, source: identity.source, resumedAt: processed, ranges: state.ranges, rows: state.loadedRows },
    'backfill starting',
  )
  if (state.retentionGaps !== undefined && state.retentionGaps.length > 0)
    logger?.warn(
      { backfillId, retentionGaps: state.retentionGaps },
      'retention removed records the range may have held (--accept-retention-gap): backfilling what is left',
    )

  const guardOffsets = new OffsetReader(kafka)
  const live = options.live ?? {}
  const guard = new LiveGuard({
    offsets: guardOffsets,
    liveGroup: live.group ?? DEFAULTS.liveGroup,
    liveTopic: live.topic ?? DEFAULTS.liveTopic,
    policy: {
      ...live.policy,
      ...(live.maxLag === undefined ? {} : { stopLagRecords: live.maxLag }),
      ...(live.maxApiLatencyMs === undefined ? {} : { maxApiLatencyMs: live.maxApiLatencyMs }),
      ...(live.intervalMs === undefined ? {} : { intervalMs: live.intervalMs }),
    },
    ...(options.apiSlots === undefined ? {} : { slots: options.apiSlots }),
    ...(logger === undefined ? {} : { logger }),
    onChange: () => report(),
  })
  const client = options.createClient({ onResponse: (info) => guard.noteLatency(info.durationMs) })
  const instanceId = options.instanceId ?? `backfill-${process.pid}`

  const report = (): void =>
    options.progress?.update({
      backfillId,
      done: processed,
      total: state.loadComplete ? state.loadedRows : Math.max(state.loadedRows, identity.lines - (format === 'csv' ? 1 : 0)),
      loaded: state.loadedRows,
      loadComplete: state.loadComplete,
      yielding: guard.yieldingBecause,
    })

  let finish!: () => void
  const finished = new Promise<void>((resolve) => {
    finish = resolve
  })
  const rangeEnds = new Map((state.ranges ?? []).map((r) => [r.partition, BigInt(r.end)]))
  const checkDone = async (): Promise<void> => {
    if (input.kind === 'file') {
      if (state.loadComplete && processed >= state.loadedRows) finish()
      return
    }
    const a = new OffsetReader(kafka)
    try {
      const at = await retrying(() => a.committedOffsets(`backfill-${backfillId}`, input.topic))
      const open = (state.ranges ?? []).filter(
        (r) => BigInt(r.start) < BigInt(r.end) && (at.get(r.partition) ?? -1n) < BigInt(r.end),
      )
      if (open.length === 0) finish()
    } finally {
      await a.close()
    }
  }

  /** Records of a committed transaction that belong to the backfill (a topic range ends before live traffic after --to). */
  const inRange = (partition: number, first: bigint, last: bigint, records: number): number => {
    if (input.kind === 'file') return records
    const r = state.ranges?.find((x) => x.partition === partition)
    if (r === undefined) return 0
    const from = first > BigInt(r.start) ? first : BigInt(r.start)
    const to = last + 1n < BigInt(r.end) ? last + 1n : BigInt(r.end)
    // Not more than the records: a transaction's span also covers offsets retention removed
    // (read on past a gap with --accept-retention-gap) and transaction markers.
    return to > from ? Math.min(records, Number(to - from)) : 0
  }

  const overtaken = new OvertakenGaps(input, {
    backfillId,
    state: () => state,
    replaceState: (s) => {
      state = s
    },
    storeState: (s) => writeState(kafka, stateTopic, s, logger),
    stop: () => finish(),
    ...(logger === undefined ? {} : { logger }),
  })

  const setup = await startEnricher({
    kafka,
    schemaRegistry: options.schemaRegistry,
    client: guardedClient(client, guard),
    topics: enrichmentTopics,
    instanceId,
    ...(logger === undefined ? {} : { logger }),
  })
  const pipeline = createEnrichmentStep({
    kafka,
    setup,
    source:
      input.kind === 'file'
        ? { kind: 'file', topic: topics.rows }
        : { kind: 'topic', topic: input.topic, ends: rangeEnds },
    topics: { ...enrichmentTopics, ledger: topics.ledger, dlq: topics.dlq },
    marker: { backfillId, source: identity.source },
    offsetOutOfRange: overtaken.policy,
    groupId: `backfill-${backfillId}`,
    transactionalIdPrefix: `backfill-${backfillId}`,
    concurrency: options.concurrency ?? DEFAULTS.concurrency,
    partitionsConcurrently: partitions,
    ...(options.consumer === undefined ? {} : { consumer: options.consumer }),
    ...(logger === undefined ? {} : { logger }),
    hooks: {
      onCommitted: (e) => {
        processed += inRange(e.partition, BigInt(e.firstOffset), BigInt(e.lastOffset), e.records)
        report()
        void checkDone().catch((err: unknown) => logger?.warn({ err }, 'checking the end of the backfill failed'))
      },
      onPaused: (e) =>
        logger?.warn({ code: e.code, partition: e.partition, delayMs: e.delayMs }, 'backfill paused by a systemic failure; will retry'),
      onOffsetOutOfRange: overtaken.onOffsetOutOfRange,
    },
  })

  let yielding: YieldSummary | undefined
  let loading: Promise<unknown> = Promise.resolve()
  const stopLoading = new AbortController()
  const onAbort = (): void => {
    stopLoading.abort()
    finish()
  }
  options.signal?.addEventListener('abort', onAbort, { once: true })
  try {
    await guard.start()
    await pipeline.start()
    report()
    if (input.kind === 'file') {
      loading = loadFile({
        kafka,
        topics,
        partitions,
        path: input.path,
        format: format!,
        state,
        signal: stopLoading.signal,
        ...(logger === undefined ? {} : { logger }),
        throttle: (work) => guard.run(work),
        onLoaded: (s) => {
          state = s
          report()
          if (s.loadComplete) void checkDone()
        },
      })
      // A failed load ends the run with its error (the pipeline alone would wait forever).
      loading.catch(() => finish())
    }
    await checkDone()
    // The committed offsets of a transaction show in OffsetFetch only once its markers are
    // written, possibly after the last commit event: a topic range is checked on a timer too.
    const poll =
      input.kind === 'topic'
        ? setInterval(() => void checkDone().catch((err: unknown) => logger?.debug({ err }, 'end check failed')), 1_000)
        : undefined
    await finished.finally(() => clearInterval(poll))
    await loading
  } finally {
    options.signal?.removeEventListener('abort', onAbort)
    stopLoading.abort()
    await pipeline.stop()
    await setup.stop()
    yielding = guard.summary()
    await guard.stop()
    await guardOffsets.close()
    await client.close?.()
    options.progress?.stop()
  }
  await overtaken.settle()

  const complete = options.signal?.aborted !== true
  const ledger = await readLedger(kafka, topics.ledger)
  const summary = summarise(ledger)
  if (summary.rejected > 0) await writeRejects(rejectsPath, ledger, input.kind === 'file')
  if (complete) await writeState(kafka, stateTopic, { ...state, finishedAt: Date.now() }, logger)
  const durationMs = Date.now() - started
  const expected = input.kind === 'file' ? state.loadedRows : summary.distinct
  return {
    backfillId,
    source: identity.source,
    dryRun: false,
    resumed: priorProcessed > 0,
    complete,
    rows: summary.distinct,
    enriched: summary.enriched,
    rejected: summary.rejected,
    rejectsByCode: summary.rejectsByCode,
    rejectsFile: summary.rejected > 0 ? rejectsPath : null,
    lost: complete ? Math.max(0, expected - summary.distinct) : 0,
    duplicated: ledger.length - summary.distinct,
    rowsThisRun: summary.distinct - priorProcessed,
    durationMs,
    rowsPerSecond: rate(summary.distinct - priorProcessed, durationMs),
    yields: guard.yields,
    yielding: yielding ?? guard.summary(),
    enrichedTopic: enrichmentTopics.enriched,
    retentionGaps: state.retentionGaps ?? [],
  }
}

/** Runs `work` again while it fails with a retriable Kafka error, for up to a minute. */
async function retrying<T>(work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000
  for (let delay = 100; ; delay = Math.min(delay * 2, 2_000)) {
    try {
      return await work()
    } catch (err) {
      if ((err as { retriable?: unknown }).retriable !== true || Date.now() > deadline) throw err
      await new Promise((r) => setTimeout(r, delay))
    }
  }
}

function rate(rows: number, ms: number): number {
  return ms <= 0 ? 0 : Math.round((rows / ms) * 1000 * 10) / 10
}

async function writeState(
  kafka: Kafka,
  stateTopic: string,
  state: BackfillState,
  logger: KafkaLogger | undefined,
): Promise<void> {
  // The loader's transactional id: a loader of this backfill still alive elsewhere is fenced.
  const writer = createTransactionalWriter(kafka, {
    transactionalId: `backfill-${state.backfillId}-loader`,
    ...(logger === undefined ? {} : { logger }),
  })
  try {
    await writer.run((tx) => tx.send(stateTopic, [stateMessage(state)]))
  } finally {
    await writer.close()
  }
}
