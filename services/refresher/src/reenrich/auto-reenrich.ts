import type { AvroSerde, Kafka } from '@tep/kafka'
import type { Logger } from '@tep/observability'
import type { RefresherMetrics } from '../metrics.ts'
import { reenrichHandles, type ReenrichReport } from './reenrich.ts'

export interface AutoReenrichOptions {
  kafka: Kafka
  serde: AvroSerde
  topics?: { invalidations?: string; enriched?: string; raw?: string }
  /** How often handle-level items are looked for and acted on. */
  intervalMs: number
  /** Most transactions republished per run (each costs ingest one findBy); the rest wait for the next run. */
  maxPerRun: number
  /** How far back the first run looks for handle-level items (covers a restart). */
  firstLookbackMs: number
  /**
   * How far back each run reads `transactions.enriched.v1` (the Kafka budget of a
   * run: the read costs time per retained record, not per handle); default: all
   * the topic retains.
   */
  enrichedWindowMs?: number
  /**
   * Each later run starts this long before the previous one started, for items
   * whose transaction was still open when that run read the topic; the
   * selection skips what was re-enriched since, so the overlap costs no API call.
   */
  overlapMs?: number
  /** How long a republished transaction is not republished again (its new result may be pending). */
  inFlightMs?: number
  logger: Logger
  now?: () => number
  onRun?: (report: ReenrichReport, durationMs: number) => void
  onError?: (err: unknown) => void
}

/**
 * The refresher's automatic re-enrichment of transactions whose handle (mapping)
 * was invalidated: every `intervalMs` it runs the `reenrich` tool's selection
 * over the handle-level items published since the previous run, within
 * `transactions.enriched.v1`'s retention, and republishes the affected raw
 * events with `refresh=true` and the correction header. Stateless across
 * restarts apart from the first look-back: re-running a window republishes
 * nothing that was re-enriched since.
 */
export class AutoReenricher {
  readonly #options: AutoReenrichOptions
  readonly #now: () => number
  #since: number
  #timer: NodeJS.Timeout | undefined
  #running: Promise<unknown> | undefined
  #stopped = false
  /**
   * Transaction id → when this instance republished it. Until ingest has written
   * the new result the selection would pick the transaction again, so it is
   * skipped for `inFlightMs` (by default two intervals, at least a minute).
   */
  readonly #inFlight = new Map<string, number>()

  constructor(options: AutoReenrichOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
    this.#since = this.#now() - options.firstLookbackMs
  }

  start(): void {
    const tick = () => {
      if (this.#stopped) return
      this.#running = this.runOnce()
        .catch((err: unknown) => {
          this.#options.onError?.(err)
          this.#options.logger.warn({ err }, 're-enrichment of invalidated handles failed; retrying at the next interval')
        })
        .finally(() => {
          if (!this.#stopped) this.#timer = setTimeout(tick, this.#options.intervalMs)
        })
    }
    this.#timer = setTimeout(tick, this.#options.intervalMs)
  }

  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    await this.#running
  }

  /**
   * One run now, after the one under way if any: two runs at once would both
   * republish the transactions neither has recorded as in flight yet.
   */
  runOnce(): Promise<ReenrichReport> {
    const run = (this.#queue ?? Promise.resolve()).catch(() => undefined).then(() => this.#runOnce())
    this.#queue = run
    return run
  }

  #queue: Promise<unknown> | undefined

  /** The window moves on only when nothing was left for later (`deferred` 0). */
  async #runOnce(): Promise<ReenrichReport> {
    const { kafka, serde, logger, maxPerRun } = this.#options
    const startedAt = this.#now()
    const keepMs = this.#options.inFlightMs ?? Math.max(2 * this.#options.intervalMs, 60_000)
    for (const [id, at] of this.#inFlight) if (at < startedAt - keepMs) this.#inFlight.delete(id)
    const report = await reenrichHandles({
      kafka,
      serde,
      invalidationsSince: new Date(this.#since),
      ...(this.#options.enrichedWindowMs === undefined
        ? {}
        : { enrichedSince: new Date(startedAt - this.#options.enrichedWindowMs) }),
      maxRepublish: maxPerRun,
      inFlight: new Set(this.#inFlight.keys()),
      ...(this.#options.topics === undefined ? {} : { topics: this.#options.topics }),
      logger,
    })
    for (const id of report.transactionIds) this.#inFlight.set(id, startedAt)
    if (report.deferred === 0) this.#since = startedAt - (this.#options.overlapMs ?? 60_000)
    this.#options.onRun?.(report, this.#now() - startedAt)
    return report
  }
}

/** The refresher's metrics and log line for each run. */
export function reenrichObserver(
  metrics: RefresherMetrics,
  logger: Logger,
  now: () => number,
): Pick<AutoReenrichOptions, 'onRun' | 'onError'> {
  return {
    onRun: (report, durationMs) => {
      metrics.reenrichRuns.inc({ outcome: 'ok' })
      metrics.reenrichRepublished.inc(report.republished)
      metrics.reenrichScanned.inc(report.scanned)
      metrics.reenrichDeferred.set(report.deferred)
      metrics.reenrichLastRun.set(now() / 1000)
      if (report.handles > 0)
        logger.info({ ...report, transactionIds: undefined, durationMs }, 'invalidated handles re-enriched')
    },
    onError: () => metrics.reenrichRuns.inc({ outcome: 'error' }),
  }
}
