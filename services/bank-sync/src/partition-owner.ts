import { createTransactionalWriter, isFencedError, type KafkaLogger, type TransactionalWriter } from '@tep/kafka'
import type { Consent } from '@tep/schemas'
import { decideConsentRecord, isTerminal } from './consent-status.ts'
import { syncConsent } from './consent-syncer.ts'
import { writeUnsavedTokens } from './consent-tokens.ts'
import type { SyncDeps, SyncLogger, SyncOutcome, SyncWrite } from './sync-deps.ts'
import { publishConsentWrite } from './consent-transaction.ts'
import { PartitionFencedError } from './errors.ts'
import type { OwnerOptions } from './owner-options.ts'
import { syncBackoffMs, TOKEN_WRITE_ON_STOP_MS, TOKEN_WRITE_RETRY_MS, tokenWriteRetryMs, waitAtMost } from './sync-backoff.ts'



interface Entry {
  consent: Consent
  /** A non-terminal record landed after the terminal one in the log: write the terminal state again. */
  needsReassert: boolean
  /** Wall-clock ms of the next sync. */
  dueAt: number
  running: boolean
  failures: number
  /** Highest version in the log, also of records not applied (a stale writer's): the next write goes above it. */
  maxVersion: number
  /** Wall-clock ms of the next try to write this consent's kept rotated tokens (if it has any). */
  tokenWriteAt: number
  tokenWriteFailures: number
}

/**
 * The owner of one partition of `bank.consents.v1`: its consents' state (rebuilt
 * from the partition on every assignment), their sync schedule, and the
 * transactional writer `<prefix>-<partition>` through which every write of these
 * consents goes. Starting that writer fences a previous owner (a zombie's open
 * transaction is aborted and its later commits fail), so two instances never both
 * publish a consent's transactions.
 */
export class PartitionOwner {
  readonly partition: number
  readonly #o: OwnerOptions
  readonly #entries = new Map<string, Entry>()
  #writer: TransactionalWriter | undefined
  #target: bigint | undefined
  #lastOffset = -1n
  #caughtUp = false
  #stopped = false
  /** Stopping, but still writing kept rotated tokens before the writer closes. */
  #leaving = false
  #fenced = false
  #timer: NodeJS.Timeout | undefined
  readonly #running = new Set<Promise<void>>()
  #txChain: Promise<unknown> = Promise.resolve()
  #caughtUpWaiters: Array<() => void> = []

  constructor(options: OwnerOptions) {
    this.partition = options.partition
    this.#o = options
  }

  get caughtUp(): boolean {
    return this.#caughtUp
  }

  get fenced(): boolean {
    return this.#fenced
  }

  get transactionalId(): string {
    return `${this.#o.transactionalIdPrefix}-${this.partition}`
  }

  consents(): Consent[] {
    return [...this.#entries.values()].map((e) => e.consent)
  }

  whenCaughtUp(): Promise<void> {
    if (this.#caughtUp) return Promise.resolve()
    return new Promise((resolve) => this.#caughtUpWaiters.push(resolve))
  }

  /**
   * Fences any previous owner, THEN takes the partition's end offset as the
   * catch-up target: whatever a zombie committed before being fenced is below it,
   * so the rebuilt state includes it before the first sync.
   */
  async start(fetchEndOffset: () => Promise<bigint>): Promise<void> {
    if (this.#writer === undefined) {
      const writer = createTransactionalWriter(this.#o.kafka, {
        transactionalId: this.transactionalId,
        logger: writerLogger(this.#o.sync.logger),
      })
      try {
        await writer.start()
      } catch (err) {
        await writer.close().catch(() => undefined)
        throw err
      }
      if (this.#stopped) {
        // stop() ran while starting and could not close this writer.
        await writer.close().catch(() => undefined)
        return
      }
      this.#writer = writer
    }
    if (this.#stopped) return
    this.#target = await fetchEndOffset()
    this.#checkCaughtUp()
  }

  get stopped(): boolean {
    return this.#stopped
  }

  /** A record of this partition, in log order. */
  apply(consent: Consent): void {
    const entry = this.#entries.get(consent.consentId)
    if (entry === undefined) {
      this.#entries.set(consent.consentId, {
        consent,
        needsReassert: false,
        dueAt: this.#firstDue(consent),
        running: false,
        failures: 0,
        maxVersion: consent.version,
        // Kept tokens of this consent (from an owner before a rebalance): written at once.
        tokenWriteAt: 0,
        tokenWriteFailures: 0,
      })
      this.#pumpSoon()
      return
    }
    entry.maxVersion = Math.max(entry.maxVersion, consent.version)
    const decision = decideConsentRecord(entry.consent, consent)
    if (decision.action === 'apply') {
      entry.consent = consent
      if (isTerminal(consent.status)) entry.needsReassert = false
      // While rebuilding, the schedule follows the latest record, so a restart does not
      // sync every consent at once.
      else if (!this.#caughtUp && !entry.running) entry.dueAt = this.#firstDue(consent)
    } else if (decision.action === 'reassert') {
      entry.needsReassert = true
    } else if (decision.action === 'refuse') {
      this.#o.sync.logger.warn(
        { consentId: consent.consentId, reason: decision.reason, partition: this.partition },
        'consent record refused: it moves the consent to another customer; the known state is kept',
      )
    }
    this.#pumpSoon()
  }

  progress(lastOffset: bigint): void {
    if (lastOffset > this.#lastOffset) this.#lastOffset = lastOffset
    this.#checkCaughtUp()
  }

  async stop(graceMs = 10_000): Promise<void> {
    this.#stopped = true
    if (this.#timer) clearTimeout(this.#timer)
    const running = [...this.#running]
    if (running.length > 0) await waitAtMost(Promise.allSettled(running), graceMs)
    await this.#writeKeptTokensBeforeLeaving(Math.min(graceMs, TOKEN_WRITE_ON_STOP_MS))
    await this.#writer?.close().catch(() => undefined)
    for (const w of this.#caughtUpWaiters.splice(0)) w()
  }

  /**
   * Before the writer closes (rebalance, shutdown), one more try to write the kept rotated
   * tokens of this partition's consents: the next owner, likely another instance, only
   * knows what the topic holds. Safe against that owner: its writer fences ours before it
   * reads the partition's end, so a write of ours either lands below that end (and it
   * rebuilds the consent with the new tokens) or is refused as fenced. What is still not
   * written stays in memory (an owner of this process writes it if the partition comes back).
   */
  async #writeKeptTokensBeforeLeaving(limitMs: number): Promise<void> {
    const kept = this.#o.sync.unsavedTokens
    const entries = [...this.#entries.values()].filter((e) => kept.has(e.consent.consentId) && !e.running)
    if (entries.length === 0 || this.#writer === undefined || this.#fenced || !this.#caughtUp) return
    this.#leaving = true
    const writes = (async () => {
      for (const entry of entries) {
        if (this.#fenced || !this.#leaving) return
        const consentId = entry.consent.consentId
        try {
          const result = await writeUnsavedTokens(entry.consent, this.#deps())
          if (result.kind === 'failed') {
            this.#o.sync.logger.warn(
              { consentId, partition: this.partition, err: result.error },
              'cannot write the kept rotated bank tokens before giving up the consents partition; they stay in memory',
            )
          }
        } catch (err) {
          if (!(err instanceof PartitionFencedError)) throw err
          return
        }
      }
    })()
    await waitAtMost(
      writes.catch((err: unknown) =>
        this.#o.sync.logger.error({ err, partition: this.partition }, 'writing kept rotated tokens failed'),
      ),
      limitMs,
    )
    this.#leaving = false
  }

  #deps(): SyncDeps {
    return { ...this.#o.sync, commit: (w) => this.#commit(w) }
  }

  #checkCaughtUp(): void {
    if (this.#caughtUp || this.#target === undefined) return
    if (this.#lastOffset + 1n < this.#target) return
    this.#caughtUp = true
    for (const w of this.#caughtUpWaiters.splice(0)) w()
    this.#pumpSoon()
  }

  /** New consents sync at once (first sync right after consent); rebuilt ones keep their rhythm. */
  #firstDue(consent: Consent): number {
    const last = Math.max(0, ...consent.accounts.map((a) => a.lastSyncedAt ?? 0))
    if (last === 0) return Date.now()
    const elapsed = this.#o.sync.now() - last
    return (
      Date.now() +
      Math.max(0, this.#o.schedule.intervalMs - elapsed) +
      Math.random() * this.#o.schedule.jitterMs
    )
  }

  #pumpSoon(): void {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = setTimeout(() => this.#pump(), 0)
  }

  #pump(): void {
    this.#timer = undefined
    if (!this.#caughtUp || this.#stopped || this.#fenced) return
    const now = Date.now()
    let active = [...this.#entries.values()].filter((e) => e.running).length
    let nextDue = Number.POSITIVE_INFINITY
    const kept = this.#o.sync.unsavedTokens
    for (const entry of this.#entries.values()) {
      if (entry.running) continue
      if (entry.needsReassert) {
        this.#track(entry, () => this.#reassert(entry))
        continue
      }
      if (kept.has(entry.consent.consentId)) {
        // Independent of the sync schedule and of the concurrency limit (a Kafka write only).
        if (entry.tokenWriteAt <= now) {
          this.#track(entry, () => this.#writeKeptTokens(entry))
          continue
        }
        nextDue = Math.min(nextDue, entry.tokenWriteAt)
      }
      if (isTerminal(entry.consent.status) || entry.consent.status === 'PENDING') continue
      if (entry.dueAt > now) {
        nextDue = Math.min(nextDue, entry.dueAt)
        continue
      }
      if (active >= this.#o.schedule.concurrency) {
        nextDue = now + 50
        continue
      }
      active++
      this.#track(entry, () => this.#sync(entry))
    }
    if (Number.isFinite(nextDue)) {
      this.#timer = setTimeout(() => this.#pump(), Math.max(10, nextDue - Date.now()))
    }
  }

  #track(entry: Entry, work: () => Promise<void>): void {
    entry.running = true
    const p: Promise<void> = work()
      .catch((err: unknown) => {
        this.#o.sync.logger.error(
          { err, consentId: entry.consent.consentId },
          'unexpected failure of a consent sync',
        )
        entry.failures++
        entry.dueAt = Date.now() + this.#backoff(entry.failures, undefined)
      })
      .finally(() => {
        entry.running = false
        this.#running.delete(p)
        if (!this.#stopped) this.#pumpSoon()
      })
    this.#running.add(p)
  }

  async #sync(entry: Entry): Promise<void> {
    const started = process.hrtime.bigint()
    let outcome: SyncOutcome
    try {
      outcome = await syncConsent(entry.consent, this.#deps())
    } catch (err) {
      if (err instanceof PartitionFencedError) return
      throw err
    }
    const metrics = this.#o.sync.metrics
    metrics.syncDuration.observe(Number(process.hrtime.bigint() - started) / 1e9)
    metrics.syncs.inc({ outcome: outcome.kind })
    if (outcome.kind === 'synced') {
      entry.failures = 0
      entry.dueAt = Date.now() + this.#o.schedule.intervalMs + Math.random() * this.#o.schedule.jitterMs
    } else if (outcome.kind === 'backoff') {
      entry.failures++
      entry.dueAt = Date.now() + this.#backoff(entry.failures, outcome.retryAfterMs)
    }
    if (this.#o.sync.unsavedTokens.has(entry.consent.consentId)) {
      // The rotated tokens could not be written: retry that write soon, on its own.
      entry.tokenWriteFailures = 0
      entry.tokenWriteAt = Date.now() + TOKEN_WRITE_RETRY_MS
    }
    this.#o.hooks.onSynced?.(entry.consent.consentId, outcome)
  }

  /** The short retry of a kept rotated token pair's write (TOKEN_WRITE_RETRY_MS). */
  async #writeKeptTokens(entry: Entry): Promise<void> {
    let result
    try {
      result = await writeUnsavedTokens(entry.consent, this.#deps())
    } catch (err) {
      if (err instanceof PartitionFencedError) return
      throw err
    }
    if (result.kind !== 'failed') {
      entry.tokenWriteFailures = 0
      return
    }
    entry.tokenWriteFailures++
    const delay = tokenWriteRetryMs(entry.tokenWriteFailures)
    entry.tokenWriteAt = Date.now() + delay
    this.#o.sync.logger.warn(
      { consentId: entry.consent.consentId, attempt: entry.tokenWriteFailures, retryInMs: delay, err: result.error },
      'still cannot write the rotated bank tokens to the consents topic; retrying that write alone',
    )
  }

  #backoff(failures: number, retryAfterMs: number | undefined): number {
    return syncBackoffMs(failures, retryAfterMs, this.#o.schedule.maxBackoffMs)
  }

  async #reassert(entry: Entry): Promise<void> {
    const terminal = entry.consent
    const written = await this.#commit({
      consent: terminal,
      bankTransactions: [],
      rawTransactions: [],
      reason: 'REASSERT',
    })
    if (written !== null) {
      entry.needsReassert = false
      this.#o.sync.logger.warn(
        { consentId: terminal.consentId, status: terminal.status },
        'a non-terminal write raced a terminal consent state; terminal state written again',
      )
    }
  }

  /**
   * Writes outputs and the consent's next state in ONE transaction. Serialised per
   * partition (a transactional writer has one transaction open at a time). A
   * non-terminal write is refused once the consent is terminal in memory (the
   * customer ended it while the sync was reading): nothing of that sync is published.
   */
  #commit(write: SyncWrite): Promise<Consent | null> {
    const run = async (): Promise<Consent | null> => {
      const writer = this.#writer
      if (writer === undefined || this.#fenced || (this.#stopped && !this.#leaving)) {
        throw new PartitionFencedError(this.partition, new Error('partition owner stopped'))
      }
      const id = write.consent.consentId
      const entry = this.#entries.get(id)
      const current = entry?.consent
      if (current !== undefined && isTerminal(current.status) && !isTerminal(write.consent.status))
        return null
      const next: Consent = {
        ...write.consent,
        version: Math.max(current?.version ?? 0, entry?.maxVersion ?? 0, write.consent.version) + 1,
        updatedAt: this.#o.sync.now(),
      }
      try {
        await publishConsentWrite(writer, this.#o, { ...write, consent: next })
      } catch (err) {
        if (isFencedError(err)) {
          this.#fenced = true
          this.#o.sync.logger.warn(
            { partition: this.partition, transactionalId: this.transactionalId },
            'fenced by a newer owner of this consents partition; its consents are synced there now',
          )
          throw new PartitionFencedError(this.partition, err)
        }
        throw err
      }
      const metrics = this.#o.sync.metrics
      metrics.consentWrites.inc({ reason: write.reason })
      for (const t of write.bankTransactions) metrics.transactions.inc({ change: t.changeType })
      metrics.rawEvents.inc(write.rawTransactions.length)
      const latest = this.#entries.get(id)
      if (latest !== undefined) {
        latest.maxVersion = Math.max(latest.maxVersion, next.version)
        if (latest.consent.version < next.version) latest.consent = next
      }
      return next
    }
    const result = this.#txChain.then(run, run)
    this.#txChain = result.catch(() => undefined)
    return result
  }
}

/** The sync's logger for the writer (which also logs at debug level, dropped here). */
function writerLogger(log: SyncLogger): KafkaLogger {
  return {
    debug: () => {},
    info: (obj, msg) => log.info(obj, msg ?? ''),
    warn: (obj, msg) => log.warn(obj, msg ?? ''),
    error: (obj, msg) => log.error(obj, msg ?? ''),
  }
}
