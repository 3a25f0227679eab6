import { isRetriable } from '@tep/errors'
import { TopicReader, type KafkaLogger, type ReadRecord, type TopicCodec, type Kafka } from '@tep/kafka'
import type { Readiness } from '@tep/observability'
import type { Merchant, Shop } from '@tep/schemas'
import type { EntityVersions } from './entity-versions.ts'
import type { EntityKind } from './refresh-input.ts'

export interface CompactedViewTailOptions {
  kafka: Kafka
  views: Record<EntityKind, EntityVersions>
  shops: { topic: string; codec: TopicCodec<Shop> }
  merchants: { topic: string; codec: TopicCodec<Merchant> }
  readiness?: Readiness
  logger?: KafkaLogger
  onUndecodable?: (topic: string, err: unknown) => void
}

export const VIEW_CHECK = 'compacted-topics'

interface CatchUp {
  /** Partitions still to read up to their end offset; undefined until the end offsets are known. */
  remaining: Map<string, bigint> | undefined
  promise: Promise<void>
  resolve: () => void
}

/**
 * Reads `merchant.shops.v1` and `merchant.merchants.v1` from the beginning and
 * keeps reading (read committed), feeding the version view. The view is how
 * the refresher knows what the table holds, so every instance reads all
 * partitions: a TopicReader (no consumer group, nothing committed).
 *
 * `catchUp()` snapshots the current end offsets and resolves once they are
 * read; the refresher calls it at start (readiness) and after every partition
 * assignment, because the previous owner of a partition may have written
 * versions this instance has not read yet.
 */
export class CompactedViewTail {
  private readonly options: CompactedViewTailOptions
  private reader: TopicReader | undefined
  private readonly positions = new Map<string, bigint>()
  /** Catch-ups requested and not reached yet. */
  private readonly pending = new Set<CatchUp>()
  private caughtUpOnce = false
  private stopped = false

  constructor(options: CompactedViewTailOptions) {
    this.options = options
    options.readiness?.register(VIEW_CHECK, 'reading the compacted shop and merchant topics')
  }

  async start(): Promise<void> {
    const { kafka, shops, merchants, logger } = this.options
    const reader = new TopicReader({
      kafka,
      topics: [shops.topic, merchants.topic],
      follow: true,
      maxWaitMs: 250,
      ...(logger === undefined ? {} : { logger }),
      onRecords: async (batch) => {
        const entity: EntityKind = batch.topic === shops.topic ? 'shop' : 'merchant'
        for (const record of batch.records) await this.observe(entity, batch.topic, record)
        // nextOffset also moves past transaction markers: the end of a transactional topic is one.
        this.advance(`${batch.topic}:${batch.partition}`, batch.nextOffset)
      },
    })
    this.reader = reader
    await reader.start()
    await this.catchUp()
  }

  private async observe(entity: EntityKind, topic: string, record: ReadRecord): Promise<void> {
    const { shops, merchants, views, logger } = this.options
    const key = record.key?.toString('utf8')
    if (key === undefined) return
    if (record.value === null) {
      // A tombstone has no fetchedAt; the time it was written is its version.
      views[entity].observeCommitted(key, { version: Number(record.timestamp), deleted: true })
      return
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const value =
          entity === 'shop' ? await shops.codec.decode(record.value) : await merchants.codec.decode(record.value)
        views[entity].observeCommitted(key, { version: value.fetchedAt, deleted: false })
        return
      } catch (err) {
        // Registry unavailable: retry the same record; skipping it would lose a version.
        if (isRetriable(err) && !this.stopped) {
          logger?.warn({ err, topic, offset: record.offset.toString(), attempt }, 'schema registry unavailable; retrying the record')
          await new Promise((r) => setTimeout(r, Math.min(30_000, 200 * 2 ** Math.min(attempt, 8))))
          continue
        }
        logger?.warn(
          { err, topic, offset: record.offset.toString(), key },
          'undecodable record on a compacted topic; its key keeps the version known so far',
        )
        this.options.onUndecodable?.(topic, err)
        return
      }
    }
  }

  /**
   * Resolves once everything committed to the topics before this call has been
   * read. `whenCaughtUp()` waits for it from the moment of the call on, before
   * the end offsets are even known.
   */
  catchUp(): Promise<void> {
    let resolve!: () => void
    const promise = new Promise<void>((r) => (resolve = r))
    const catchUp: CatchUp = { remaining: undefined, promise, resolve }
    this.pending.add(catchUp)
    void this.measureUntilKnown(catchUp)
    return promise
  }

  /** Without the end offsets nobody can tell when the view is complete: keep trying while running. */
  private async measureUntilKnown(catchUp: CatchUp): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        await this.measure(catchUp)
        return
      } catch (err) {
        this.options.logger?.warn(
          { err, attempt },
          'reading the end offsets of the compacted topics failed; retrying',
        )
        await new Promise((r) => setTimeout(r, Math.min(30_000, 500 * 2 ** attempt)))
      }
    }
  }

  private async measure(catchUp: CatchUp): Promise<void> {
    const { readiness } = this.options
    const reader = this.reader
    if (reader === undefined) throw new Error('the compacted view is not started')
    const remaining = new Map<string, bigint>()
    // Last stable offsets: a transaction still open (a fenced previous owner's) does not hold the catch-up back.
    for (const [key, end] of await reader.endOffsets()) {
      if ((this.positions.get(key) ?? 0n) < end) remaining.set(key, end)
    }
    catchUp.remaining = remaining
    if (!this.caughtUpOnce && remaining.size > 0)
      readiness?.set(VIEW_CHECK, false, `reading ${remaining.size} partition(s) to their end`)
    this.settle(catchUp)
  }

  /** Resolves when every catch-up requested so far is reached. */
  async whenCaughtUp(): Promise<void> {
    await Promise.all([...this.pending].map((c) => c.promise))
  }

  async stop(): Promise<void> {
    this.stopped = true
    const reader = this.reader
    this.reader = undefined
    if (reader !== undefined) await reader.stop()
  }

  private advance(key: string, position: bigint): void {
    if ((this.positions.get(key) ?? 0n) < position) this.positions.set(key, position)
    for (const catchUp of this.pending) {
      const target = catchUp.remaining?.get(key)
      if (target !== undefined && position >= target) catchUp.remaining!.delete(key)
      this.settle(catchUp)
    }
  }

  private settle(catchUp: CatchUp): void {
    if (catchUp.remaining === undefined || catchUp.remaining.size > 0) return
    this.pending.delete(catchUp)
    this.markCaughtUp()
    catchUp.resolve()
  }

  private markCaughtUp(): void {
    this.caughtUpOnce = true
    this.options.readiness?.set(VIEW_CHECK, true)
  }
}
