import type { KafkaLogger, OffsetReader } from '@tep/kafka'

export interface LiveGuardOptions {
  /** Reads the live topic's end offsets and the live group's committed offsets. */
  offsets: OffsetReader
  /** Consumer group of the live ingest (its committed offsets give its lag). */
  liveGroup: string
  /** The live ingest's input topic. */
  liveTopic: string
  /** Yield while the live ingest's lag (records, all partitions) is above this. 0 = never for lag. */
  maxLiveLag: number
  /**
   * Yield for one check interval when the enrichment API's answers to the
   * backfill (moving average, queueing in our own limiter excluded) are slower
   * than this: the API is shared with the live ingest. 0 = never for latency.
   */
  maxApiLatencyMs: number
  /** How often the live lag is read; default 2 000 ms. */
  intervalMs?: number
  logger?: KafkaLogger
  /** Told when the backfill starts or stops yielding (reason undefined = running). */
  onChange?: (reason: string | undefined) => void
}

/**
 * "Live first": the backfill asks the guard before each enrichment API call and
 * waits while the live ingest is behind or the API is slow. Waiting happens in
 * the transform, where the pipeline keeps heartbeating and no Kafka transaction
 * is open yet, so a long yield costs nothing but time.
 */
export class LiveGuard {
  readonly #options: LiveGuardOptions
  readonly #intervalMs: number
  #latencyEwma = 0
  #reason: string | undefined
  #waiters: (() => void)[] = []
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #lag = 0
  #yields = 0

  constructor(options: LiveGuardOptions) {
    this.#options = options
    this.#intervalMs = options.intervalMs ?? 2_000
  }

  /** Why the backfill is yielding now, or undefined. */
  get yieldingBecause(): string | undefined {
    return this.#reason
  }

  get liveLag(): number {
    return this.#lag
  }

  /** Times the backfill started yielding. */
  get yields(): number {
    return this.#yields
  }

  async start(): Promise<void> {
    await this.#check()
    this.#timer = setInterval(() => {
      this.#running ??= this.#check().finally(() => {
        this.#running = undefined
      })
    }, this.#intervalMs)
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    await this.#running
    this.#set(undefined)
  }

  /** One answer of the API to the backfill took this long. */
  noteLatency(ms: number): void {
    this.#latencyEwma = this.#latencyEwma === 0 ? ms : this.#latencyEwma * 0.8 + ms * 0.2
    const max = this.#options.maxApiLatencyMs
    if (max > 0 && this.#latencyEwma > max && this.#reason === undefined)
      this.#set(`enrichment API answers in ${Math.round(this.#latencyEwma)} ms on average (threshold ${max} ms)`)
  }

  /** Resolves at once, or when the backfill may call the API again (or the signal aborts). */
  clear(signal?: AbortSignal): Promise<void> {
    if (this.#reason === undefined || signal?.aborted === true) return Promise.resolve()
    return new Promise((resolve) => {
      const done = (): void => {
        signal?.removeEventListener('abort', done)
        resolve()
      }
      this.#waiters.push(done)
      signal?.addEventListener('abort', done, { once: true })
    })
  }

  #set(reason: string | undefined): void {
    if (reason === this.#reason) return
    const was = this.#reason
    this.#reason = reason
    if (reason !== undefined && was === undefined) {
      this.#yields += 1
      this.#options.logger?.info({ reason }, 'backfill yields to live traffic')
    }
    if (reason === undefined) {
      this.#options.logger?.info({}, 'backfill resumes')
      const waiters = this.#waiters
      this.#waiters = []
      for (const w of waiters) w()
    }
    this.#options.onChange?.(reason)
  }

  async #check(): Promise<void> {
    const { offsets, liveGroup, liveTopic, maxLiveLag } = this.#options
    let lag = 0
    try {
      const [ends, done] = await Promise.all([
        offsets.topicOffsets(liveTopic, { readCommitted: true }),
        offsets.committedOffsets(liveGroup, liveTopic),
      ])
      for (const e of ends) {
        const c = done.get(e.partition)
        // A partition the live group never committed: no live ingest to protect there.
        if (c === undefined) continue
        const l = e.high - c
        if (l > 0n) lag += Number(l)
      }
    } catch (err) {
      // Not knowing the live lag is no reason to stop the backfill; the latency check still applies.
      this.#options.logger?.debug({ err }, 'reading the live ingest lag failed')
      return
    }
    this.#lag = lag
    if (maxLiveLag > 0 && lag > maxLiveLag) {
      this.#set(`live ingest lag ${lag} records (threshold ${maxLiveLag})`)
      return
    }
    // A latency yield lasts one interval; the average starts afresh after it.
    if (this.#reason?.startsWith('enrichment API') === true) this.#latencyEwma = 0
    this.#set(undefined)
  }
}
