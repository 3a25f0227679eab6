import { isFencedError, transactionalProducerConfig, withTransaction, type TopicCodec } from '@tep/kafka'
import type { BankTransaction, Consent, RawTransaction } from '@tep/schemas'
import type { Kafka, Message, Producer } from 'kafkajs'
import { decideConsentRecord, isTerminal } from './consent-status.ts'
import { syncConsent, type SyncDeps, type SyncOutcome, type SyncWrite } from './consent-syncer.ts'
import { PartitionFencedError } from './errors.ts'

/** Records per send inside a sync's transaction (bank transaction records carry the bank's JSON, ~1-2 kB). */
const SEND_SLICE = 200

export interface BankSyncTopics {
  consents: string
  bankTransactions: string
  raw: string
}

export interface BankSyncCodecs {
  consent: TopicCodec<Consent>
  bankTransaction: TopicCodec<BankTransaction>
  raw: TopicCodec<RawTransaction>
}

export interface ScheduleSettings {
  intervalMs: number
  jitterMs: number
  concurrency: number
  /** Longest pause after repeated failures of one consent. */
  maxBackoffMs: number
}

/** Test and instrumentation hooks. */
export interface OwnerHooks {
  /** After a sync finished (any outcome). */
  onSynced?: (consentId: string, outcome: SyncOutcome) => void
  /**
   * Inside the transaction, after the records were sent and before the commit.
   * Tests use it to stand for a crash between fetching and committing.
   */
  beforeCommit?: (write: SyncWrite & { partition: number }) => Promise<void>
}

export interface OwnerOptions {
  partition: number
  kafka: Kafka
  topics: BankSyncTopics
  codecs: BankSyncCodecs
  transactionalIdPrefix: string
  schedule: ScheduleSettings
  sync: Omit<SyncDeps, 'commit'>
  hooks: OwnerHooks
}

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
}

/**
 * The owner of one partition of `bank.consents.v1`: its consents' state (rebuilt
 * from the partition on every assignment), their sync schedule, and the
 * transactional producer `<prefix>-<partition>` through which every write of these
 * consents goes. Creating that producer fences a previous owner (a zombie's open
 * transaction is aborted and its later commits fail), so two instances never both
 * publish a consent's transactions.
 */
export class PartitionOwner {
  readonly partition: number
  readonly #o: OwnerOptions
  readonly #entries = new Map<string, Entry>()
  #producer: Producer | undefined
  #target: bigint | undefined
  #lastOffset = -1n
  #caughtUp = false
  #stopped = false
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
    if (this.#producer === undefined) {
      const producer = this.#o.kafka.producer(transactionalProducerConfig(this.transactionalId))
      try {
        await producer.connect()
      } catch (err) {
        await producer.disconnect().catch(() => undefined)
        throw err
      }
      if (this.#stopped) {
        // stop() ran while connecting and could not disconnect this producer.
        await producer.disconnect().catch(() => undefined)
        return
      }
      this.#producer = producer
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
    if (running.length > 0) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        Promise.allSettled(running),
        new Promise((r) => {
          timer = setTimeout(r, graceMs)
        }),
      ])
      if (timer) clearTimeout(timer)
    }
    await this.#producer?.disconnect().catch(() => undefined)
    for (const w of this.#caughtUpWaiters.splice(0)) w()
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
    for (const entry of this.#entries.values()) {
      if (entry.running) continue
      if (entry.needsReassert) {
        this.#track(entry, () => this.#reassert(entry))
        continue
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
      outcome = await syncConsent(entry.consent, { ...this.#o.sync, commit: (w) => this.#commit(w) })
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
    this.#o.hooks.onSynced?.(entry.consent.consentId, outcome)
  }

  #backoff(failures: number, retryAfterMs: number | undefined): number {
    const exp = Math.min(this.#o.schedule.maxBackoffMs, 500 * 2 ** Math.min(failures - 1, 20))
    const jittered = exp / 2 + (Math.random() * exp) / 2
    return Math.max(jittered, retryAfterMs ?? 0)
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
   * partition (a transactional producer has one transaction open at a time). A
   * non-terminal write is refused once the consent is terminal in memory (the
   * customer ended it while the sync was reading): nothing of that sync is published.
   */
  #commit(write: SyncWrite): Promise<Consent | null> {
    const run = async (): Promise<Consent | null> => {
      const producer = this.#producer
      if (producer === undefined || this.#fenced || this.#stopped) {
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
      const { codecs, topics } = this.#o
      const bankMessages: Message[] = await Promise.all(
        write.bankTransactions.map(async (t) => ({
          key: `${t.consentId}/${t.accountId}/${t.entryReference}`,
          value: await codecs.bankTransaction.encode(t),
        })),
      )
      const rawMessages: Message[] = await Promise.all(
        write.rawTransactions.map(async (r) => ({ key: r.transactionId, value: await codecs.raw.encode(r) })),
      )
      const consentMessage: Message = { key: id, value: await codecs.consent.encode(next) }
      try {
        await withTransaction(producer, async (tx) => {
          // A first sync with a long backfill can hold thousands of records: sent in slices so no
          // produce request (one record batch per partition) grows past the broker's message.max.bytes.
          for (let i = 0; i < bankMessages.length; i += SEND_SLICE) {
            await tx.send(topics.bankTransactions, bankMessages.slice(i, i + SEND_SLICE))
          }
          for (let i = 0; i < rawMessages.length; i += SEND_SLICE)
            await tx.send(topics.raw, rawMessages.slice(i, i + SEND_SLICE))
          await tx.send(topics.consents, [consentMessage])
          await this.#o.hooks.beforeCommit?.({ ...write, consent: next, partition: this.partition })
        })
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
