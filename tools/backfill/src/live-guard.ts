import type { KafkaLogger, OffsetReader } from '@tep/kafka'
import type { EnrichmentPort } from '@tep/transaction-ingest'
import { nextShare, resolveYieldPolicy, type YieldDecision, type YieldPolicy, type YieldState } from './yield-policy.ts'

export interface LiveGuardOptions {
  /** Reads the live topic's end offsets and the live group's committed offsets. */
  offsets: Pick<OffsetReader, 'topicOffsets' | 'committedOffsets'>
  /** Consumer group of the live ingest (its committed offsets give its lag). */
  liveGroup: string
  /** The live ingest's input topic. */
  liveTopic: string
  /** Overrides of DEFAULT_YIELD_POLICY. */
  policy?: Partial<YieldPolicy>
  /** API calls of the backfill in flight at full share (its --api-concurrency); default 16. */
  slots?: number
  now?: () => number
  logger?: KafkaLogger
  /** Told when the backfill starts or stops yielding (reason undefined = running at full share). */
  onChange?: (reason: string | undefined) => void
}

/** How the backfill yielded over a run, for its report and the bench. */
export interface YieldSummary {
  /** Times the backfill started yielding (a look found the live path behind after one that did not). */
  yields: number
  /** Time spent below the full share, and stopped, ms. */
  slowedMs: number
  stoppedMs: number
  /** Time-weighted mean share over the run (1 = never slowed). */
  meanShare: number
}

/**
 * "Live first": every enrichment API call of the backfill takes a slot here.
 * After each look at the live path (YieldPolicy) the guard sets the backfill's
 * share: the slots it may hold (share x slots, at least one) and how long a slot
 * rests after its call (a call of d ms keeps its slot d x (1 - share) / share
 * more), so the API calls, and with them the fetch of rows (the pipeline pulls
 * no more than it can enrich) and the produce of results, run at about `share`
 * of the budget. At share 0 no call starts. Waiting happens in the transform,
 * where the pipeline keeps heartbeating and no Kafka transaction is open yet.
 */
export class LiveGuard {
  readonly #options: LiveGuardOptions
  readonly #policy: YieldPolicy
  readonly #slots: number
  readonly #now: () => number
  #share: number
  #state: YieldState = 'slowed'
  #reason: string | undefined
  /** The last look found the live path behind (or the API slow). */
  #behind = false
  #latencyEwma = 0
  #held = 0
  #waiters: Array<() => void> = []
  #timer: NodeJS.Timeout | undefined
  #running: Promise<unknown> | undefined
  #lag = 0
  #lagMs = 0
  #lastEnds: { at: number; total: bigint } | undefined
  #rateEwma = 0
  #yields = 0
  #since: number
  #started: number
  #shareTime = 0
  #slowedMs = 0
  #stoppedMs = 0

  constructor(options: LiveGuardOptions) {
    this.#options = options
    this.#policy = resolveYieldPolicy(options.policy)
    this.#slots = Math.max(1, Math.floor(options.slots ?? 16))
    this.#now = options.now ?? Date.now
    // A backfill starts at its smallest share and earns the rest while the live path keeps up.
    this.#share = this.#policy.minShare
    this.#since = this.#now()
    this.#started = this.#since
  }

  get policy(): Readonly<YieldPolicy> {
    return this.#policy
  }

  /** The backfill's share of its budget now, 0..1. */
  get share(): number {
    return this.#share
  }

  /** Why the backfill is yielding now, or undefined. */
  get yieldingBecause(): string | undefined {
    return this.#reason
  }

  get liveLag(): number {
    return this.#lag
  }

  get liveLagMs(): number {
    return this.#lagMs
  }

  /** Times the backfill started yielding: looks that found the live path behind after one that did not. */
  get yields(): number {
    return this.#yields
  }

  summary(): YieldSummary {
    this.#account()
    const total = this.#now() - this.#started
    return {
      yields: this.#yields,
      slowedMs: Math.round(this.#slowedMs),
      stoppedMs: Math.round(this.#stoppedMs),
      meanShare: total <= 0 ? this.#share : Math.round((this.#shareTime / total) * 1_000) / 1_000,
    }
  }

  async start(): Promise<void> {
    await this.check()
    this.#timer = setInterval(() => {
      this.#running ??= this.check().finally(() => {
        this.#running = undefined
      })
    }, this.#policy.intervalMs)
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    await this.#running
    this.#apply({ share: 1, state: 'full', reason: undefined, lagMs: this.#lagMs })
  }

  /** One answer of the API to the backfill took this long. */
  noteLatency(ms: number): void {
    this.#latencyEwma = this.#latencyEwma === 0 ? ms : this.#latencyEwma * 0.8 + ms * 0.2
  }

  /** Resolves when the backfill may start one more API call (or the signal aborts); pair with release(). */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.resolve()
    if (this.#free()) {
      this.#held += 1
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const done = (): void => {
        signal?.removeEventListener('abort', aborted)
        this.#held += 1
        resolve()
      }
      const aborted = (): void => {
        this.#waiters = this.#waiters.filter((w) => w !== done)
        resolve()
      }
      this.#waiters.push(done)
      signal?.addEventListener('abort', aborted, { once: true })
    })
  }

  /** The call that held a slot took `durationMs`; the slot rests per the share, then is free. */
  release(durationMs: number): void {
    const share = this.#share
    const restMs = share >= 1 || share <= 0 ? 0 : Math.min(2_000, (durationMs * (1 - share)) / share)
    if (restMs < 1) return this.#free1()
    setTimeout(() => this.#free1(), restMs).unref()
  }

  /** Runs `work` in a slot: waits for one, and rests it after per the share (every API call, every loaded chunk). */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire()
    const started = performance.now()
    try {
      return await work()
    } finally {
      this.release(performance.now() - started)
    }
  }

  /** Reads the live lag once and sets the share (the timer calls this; tests may too). */
  async check(): Promise<YieldDecision | undefined> {
    const { offsets, liveGroup, liveTopic } = this.#options
    let lag = 0
    let total = 0n
    try {
      const [ends, done] = await Promise.all([
        offsets.topicOffsets(liveTopic, { readCommitted: true }),
        offsets.committedOffsets(liveGroup, liveTopic),
      ])
      for (const e of ends) {
        total += e.high
        const c = done.get(e.partition)
        // A partition the live group never committed: no live ingest to protect there.
        if (c === undefined) continue
        const l = e.high - c
        if (l > 0n) lag += Number(l)
      }
    } catch (err) {
      // Not knowing the live lag is no reason to stop the backfill; the latency check still applies.
      this.#options.logger?.debug({ err }, 'reading the live ingest lag failed')
      return undefined
    }
    const at = this.#now()
    const last = this.#lastEnds
    this.#lastEnds = { at, total }
    if (last !== undefined && at > last.at) {
      // Smoothed: at a low live rate one look's window may see no record arrive while one waits.
      const window = (Number(total - last.total) / (at - last.at)) * 1_000
      this.#rateEwma = this.#rateEwma === 0 ? window : this.#rateEwma * 0.7 + window * 0.3
    }
    this.#lag = lag
    // The first look has no rate yet: only the record bound and the latency can slow the backfill.
    const decision = nextShare(this.#policy, this.#share, {
      lagRecords: lag,
      liveRatePerSecond: last === undefined && lag > 0 ? Number.POSITIVE_INFINITY : this.#rateEwma,
      apiLatencyMs: this.#latencyEwma,
    })
    this.#lagMs = decision.lagMs
    // A latency slow-down lasts one look; the average starts afresh after it.
    if (decision.reason?.startsWith('enrichment API') === true) this.#latencyEwma = 0
    this.#apply(decision)
    return decision
  }

  #apply(d: YieldDecision): void {
    this.#account()
    const was = this.#state
    this.#share = d.share
    this.#state = d.state
    const reason = d.state === 'full' ? undefined : (d.reason ?? this.#reason ?? 'taking its share back')
    // A yield starts at the first look that finds the live path behind after one that did not.
    const behind = d.reason !== undefined
    if (behind && !this.#behind) {
      this.#yields += 1
      this.#options.logger?.info({ reason: d.reason, share: d.share }, 'backfill yields to live traffic')
    }
    this.#behind = behind
    if (d.state === 'full' && was !== 'full') this.#options.logger?.info({}, 'backfill resumes its full share')
    if (reason !== this.#reason) {
      this.#reason = reason
      this.#options.onChange?.(reason)
    }
    this.#wake()
  }

  /** Adds the time since the last change to the share's integral. */
  #account(): void {
    const now = this.#now()
    const dt = now - this.#since
    this.#since = now
    this.#shareTime += dt * this.#share
    if (this.#share < 1) this.#slowedMs += dt
    if (this.#share <= 0) this.#stoppedMs += dt
  }

  #permits(): number {
    return this.#share <= 0 ? 0 : Math.max(1, Math.round(this.#share * this.#slots))
  }

  #free(): boolean {
    return this.#held < this.#permits()
  }

  #free1(): void {
    this.#held -= 1
    this.#wake()
  }

  #wake(): void {
    while (this.#waiters.length > 0 && this.#free()) this.#waiters.shift()!()
  }
}

/** Every API call takes a slot of the guard: the backfill's share of its budget (LiveGuard). */
export function guardedClient(client: EnrichmentPort, guard: LiveGuard): EnrichmentPort {
  const slot = <T>(call: () => Promise<T>): Promise<T> => guard.run(call)
  return {
    findByCardTransaction: (input, o) => slot(() => client.findByCardTransaction(input, o)),
    findByCardTransactionBatch: (inputs, o) => slot(() => client.findByCardTransactionBatch(inputs, o)),
    completeFindByCardTransaction: (input, o) => slot(() => client.completeFindByCardTransaction(input, o)),
    completeFindByCardTransactionBatch: (inputs, o) => slot(() => client.completeFindByCardTransactionBatch(inputs, o)),
    findByBankTransfer: (scheme, input, o) => slot(() => client.findByBankTransfer(scheme, input, o)),
    getShop: (uid, o) => slot(() => client.getShop(uid, o)),
    getMerchant: (uid, o) => slot(() => client.getMerchant(uid, o)),
  }
}
