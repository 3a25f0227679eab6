import { randomBytes } from 'node:crypto'
import { Consumer, type RecordsBatch } from '@platformatic/kafka'
import type { Kafka } from '../kafka-client.ts'
import { requireConnection } from '../kafka-client.ts'
import { KafkaConfigError } from '../errors.ts'
import { SILENT_LOGGER, type KafkaLogger } from '../logger.ts'
import { hideAbortedBatches } from './aborted-filter.ts'
import { baseOptions } from './connection.ts'
import { hasProtocolError, isFailoverError } from './protocol-errors.ts'
import { fetchedRecords, type ReadRecord } from './fetched-record.ts'

export type { ReadRecord } from './fetched-record.ts'

/** The records of one partition from one fetch, in offset order. */
export interface ReadBatch {
  topic: string
  partition: number
  records: ReadRecord[]
  /** Where reading this partition continues (past transaction markers and aborted records too). */
  nextOffset: bigint
}

export interface TopicReaderOptions {
  /** A client made by createKafka (its brokers, client id and security are used). */
  kafka: Kafka
  topics: string[]
  /**
   * Read only these partitions (each of a topic in `topics`), e.g. a consumer
   * group's assignment (createReplayingGroupMember); default: every partition.
   */
  partitions?: ReadonlyArray<{ topic: string; partition: number }>
  /**
   * Called with each partition's records in offset order, awaited before that
   * partition is fetched again; a throw stops the reader with that error.
   */
  onRecords: (batch: ReadBatch) => void | Promise<void>
  /**
   * Where partitions start, keyed `${topic}:${partition}`; the others start at
   * `from` (or at the beginning).
   */
  positions?: ReadonlyMap<string, bigint>
  /** Start at the first record written at or after this moment instead of the beginning. */
  from?: Date
  /**
   * Keep reading what is written after the end offsets captured at start;
   * default false: each partition stops there and the reader ends.
   */
  follow?: boolean
  /** Bytes per fetch answer (default 16 MiB) and per partition in it (default 4 MiB). */
  maxBytes?: number
  maxBytesPerPartition?: number
  /** How long a fetch waits for new records when a partition is at its end (default 500 ms). */
  maxWaitMs?: number
  /**
   * Hand over the records of aborted transactions too (read_uncommitted fetches;
   * for checks of what a topic physically holds). The end offsets stay the last
   * stable offsets. Default false: read committed.
   */
  readUncommitted?: boolean
  logger?: KafkaLogger
  /** Told about a failed fetch that will be retried (outage, leader moved): for readiness. */
  onRetry?: (error: unknown, attempt: number) => void
}

const READ_UNCOMMITTED = 0
const READ_COMMITTED = 1
const EARLIEST = -2n
const LATEST = -1n

/** Backoff between failed fetch rounds: 100 ms doubling to 5 s. */
function retryDelayMs(attempt: number): number {
  return Math.min(5_000, 100 * 2 ** Math.min(attempt - 1, 6))
}

type FetchAnswer = Awaited<ReturnType<Consumer['fetch']>>

/** The offset after a partition's answer (past markers and aborted records too); undefined when it holds no batch. */
function answerEnd(batches: readonly RecordsBatch[]): bigint | undefined {
  const last = batches[batches.length - 1]
  return last === undefined ? undefined : last.firstOffset + BigInt(last.lastOffsetDelta) + 1n
}

interface PartitionRead {
  topic: string
  partition: number
  key: string
  next: bigint
  /** The read-committed end offset (last stable offset) when the reader started. */
  end: bigint
  /** Counted in `behind` (started below `end`, not there yet). */
  behind: boolean
  leader: number
  topicId: string
}

/**
 * Reads whole topics read-committed, without a consumer group: every partition,
 * from the beginning (or given positions, or a moment), each in offset order.
 * The ingest's shop and merchant tables, the refresher's view and the topic
 * scans need all partitions on every instance, so a group's assignment would
 * only get in the way (KafkaJS cannot read without one; its join costs a
 * rebalance round, 3 s or more, before the first record).
 *
 * The end offsets are the last stable offsets when `start()` runs: a
 * transaction still open then neither holds the reader back nor is part of a
 * bounded read. `whenCaughtUp()` resolves once every partition got there.
 * Records come as the broker's bytes, with no per-record objects beyond one
 * small literal, because the table load reads millions of them.
 *
 * One fetch loop per leader broker, so a broker with nothing new (long poll)
 * never holds back another one's partitions. Failures are retried with backoff
 * for as long as the reader runs (an outage pauses reading; `onRetry` says so).
 * The reader's own client has its own connections: a long poll never queues
 * behind, or in front of, another client's requests (a group's heartbeats).
 */
export class TopicReader {
  readonly #options: TopicReaderOptions
  readonly #logger: KafkaLogger
  readonly #consumer: Consumer<Buffer, Buffer, Buffer, Buffer>
  readonly #partitions = new Map<string, PartitionRead>()
  readonly #cutByRetention: Array<{ topic: string; partition: number; logStart: bigint }> = []
  #stopped = false
  #metadataGeneration = 0
  #remaining = 0
  #resolveCaughtUp: () => void = () => {}
  readonly #caughtUp = new Promise<void>((resolve) => (this.#resolveCaughtUp = resolve))
  #done: Promise<void> | undefined
  #stopSignal: () => void = () => {}
  readonly #stopping = new Promise<void>((resolve) => (this.#stopSignal = resolve))

  constructor(options: TopicReaderOptions) {
    const connection = requireConnection(options.kafka, 'TopicReader')
    if (options.topics.length === 0) throw new KafkaConfigError('TopicReader needs at least one topic')
    if (options.partitions?.length === 0) throw new KafkaConfigError('TopicReader needs at least one partition')
    const stray = options.partitions?.find((tp) => !options.topics.includes(tp.topic))
    if (stray !== undefined) throw new KafkaConfigError(`TopicReader: partition ${stray.topic}:${stray.partition} is not of its topics`)
    this.#options = options
    this.#logger = options.logger ?? options.kafka.logger ?? SILENT_LOGGER
    this.#consumer = new Consumer({
      ...baseOptions(connection, '-reader'),
      // Required by the client, never joined: this reader uses fetch and listOffsets only.
      groupId: `tep-topic-reader-${randomBytes(6).toString('hex')}`,
      // Failures are retried by the loop below, with its own backoff and onRetry.
      retries: 1,
    })
  }

  /** Resolves once every partition is read up to the end offset it had at start. */
  whenCaughtUp(): Promise<void> {
    return this.#caughtUp
  }

  get caughtUp(): boolean {
    return this.#done !== undefined && this.#remaining === 0
  }

  /** Partitions not yet read up to their end offset at start. */
  get behind(): number {
    return this.#remaining
  }

  /** `${topic}:${partition}` of the partitions not yet read up to their end offset at start. */
  unfinished(): string[] {
    return [...this.#partitions.values()].filter((p) => p.next < p.end).map((p) => p.key)
  }

  /** The read-committed end offsets now (last stable offsets) of the partitions read, per `${topic}:${partition}`. */
  async endOffsets(): Promise<Map<string, bigint>> {
    const ends = await this.#listOffsets(LATEST, READ_COMMITTED)
    const out = new Map<string, bigint>()
    for (const { topic, partition } of this.#wanted(ends)) out.set(`${topic}:${partition}`, ends.get(topic)![partition]!)
    return out
  }

  /**
   * After start(): partitions where `from` may reach before what the log holds (the lookup by time
   * found its first record and it no longer starts at 0): records of the window may be gone.
   */
  cutByRetention(): Array<{ topic: string; partition: number; logStart: bigint }> {
    return [...this.#cutByRetention]
  }

  /** Where reading continues, per `${topic}:${partition}`. */
  positions(): Map<string, bigint> {
    return new Map([...this.#partitions].map(([key, p]) => [key, p.next]))
  }

  /** Captures the end offsets, finds where each partition starts, and starts reading. */
  async start(): Promise<void> {
    if (this.#done !== undefined) throw new KafkaConfigError('TopicReader.start() was already called')
    const { from } = this.#options
    // A broker failover at start-up (a dead leader not replaced yet) is waited out, not thrown.
    const { ends, firsts, byTime } = await this.#untilAnswered('reading the start offsets', async () => {
      await this.#refreshMetadata(true)
      const ends = await this.#listOffsets(LATEST, READ_COMMITTED)
      const firsts = await this.#listOffsets(EARLIEST)
      const byTime = from === undefined ? undefined : await this.#listOffsets(BigInt(from.getTime()))
      return { ends, firsts, byTime }
    })
    // Built only now that every lookup worked: a failed start() leaves nothing half set.
    for (const { topic, partition } of this.#wanted(ends)) {
      const key = `${topic}:${partition}`
      const end = ends.get(topic)![partition]!
      const first = firsts.get(topic)?.[partition] ?? 0n
      const at = byTime?.get(topic)?.[partition]
      // -1 from a lookup by time: nothing written at or after the moment.
      let next = at === undefined ? first : at < 0n ? end : at
      const given = this.#options.positions?.get(key)
      if (given !== undefined) next = given > first ? given : first
      else if (at !== undefined && at === first && first > 0n) this.#cutByRetention.push({ topic, partition, logStart: first })
      this.#partitions.set(key, { topic, partition, key, next, end, behind: next < end, leader: -1, topicId: '' })
      if (next < end) this.#remaining += 1
    }
    await this.#refreshMetadata(false)
    this.#done = this.#run()
    if (this.#remaining === 0) this.#resolveCaughtUp()
    // Errors surface through done(); this keeps an unobserved failure from crashing the process.
    this.#done.catch(() => {})
  }

  /**
   * Resolves when the reader ended: at the end offsets of a bounded read, or
   * after `stop()`; rejects with the error `onRecords` threw.
   */
  done(): Promise<void> {
    if (this.#done === undefined) throw new KafkaConfigError('TopicReader.done() before start()')
    return this.#done
  }

  async stop(): Promise<void> {
    this.#stopped = true
    this.#stopSignal()
    await this.#done?.catch(() => {})
    await this.#consumer.close(true).catch(() => {})
  }

  async #run(): Promise<void> {
    try {
      while (!this.#stopped && (this.#options.follow === true || this.#remaining > 0)) {
        const generation = this.#metadataGeneration
        const leaders = new Set([...this.#partitions.values()].filter((p) => this.#reading(p)).map((p) => p.leader))
        const loops = [...leaders].map((node) =>
          this.#nodeLoop(node, generation).catch((error: unknown) => {
            // onRecords threw: the other brokers' loops stop too, and done() rejects only once they
            // did, so that no batch is handed over after it.
            this.#stopped = true
            this.#stopSignal()
            throw error
          }),
        )
        const failed = (await Promise.allSettled(loops)).find((r) => r.status === 'rejected')
        if (failed !== undefined) throw failed.reason
      }
    } finally {
      if (this.#options.follow !== true || this.#stopped) await this.#consumer.close(true).catch(() => {})
    }
  }

  #reading(p: PartitionRead): boolean {
    return this.#options.follow === true || p.next < p.end
  }

  /** `read()` again after a failover error, with backoff, until it answers or the reader is stopped. */
  async #untilAnswered<T>(what: string, read: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await read()
      } catch (error) {
        if (this.#stopped || !isFailoverError(error)) throw error
        this.#options.onRetry?.(error, attempt)
        this.#logger.warn({ err: error, attempt }, `${what} failed; retrying`)
        await Promise.race([new Promise((r) => setTimeout(r, retryDelayMs(attempt))), this.#stopping])
        if (this.#stopped) throw error
      }
    }
  }

  /** The partitions this reader reads, out of the topics' partitions in a listOffsets answer. */
  #wanted(offsets: Map<string, bigint[]>): Array<{ topic: string; partition: number }> {
    if (this.#options.partitions !== undefined) return [...this.#options.partitions]
    return this.#options.topics.flatMap((topic) => (offsets.get(topic) ?? []).map((_, partition) => ({ topic, partition })))
  }

  /** listOffsets of the partitions read (all of the topics' unless `partitions` names some). */
  #listOffsets(timestamp: bigint, isolationLevel = READ_UNCOMMITTED): Promise<Map<string, bigint[]>> {
    const { topics, partitions: only } = this.#options
    const partitions: Record<string, number[]> = {}
    for (const { topic, partition } of only ?? []) (partitions[topic] ??= []).push(partition)
    return this.#consumer.listOffsets({ topics, timestamp, isolationLevel, ...(only === undefined ? {} : { partitions }) })
  }

  /**
   * Fetches the partitions led by `node` until the metadata changes, nothing is
   * left, or the reader stops. The next fetch is sent as soon as an answer has
   * arrived, from where that answer ends, and the answer is delivered while
   * the broker prepares the next one: one fetch in flight at a time (the
   * client's fetch session per broker allows no more), but the reader no
   * longer idles for the broker between answers (10 % of a 5M-shop table
   * load was that wait, issue 22).
   */
  async #nodeLoop(node: number, generation: number): Promise<void> {
    let failures = 0
    let pending = this.#fetchFrom(node, new Map())
    try {
      while (!this.#stopped && generation === this.#metadataGeneration) {
        const current = pending
        pending = undefined
        if (current === undefined) return
        let response: FetchAnswer
        try {
          response = await current.answer
        } catch (error) {
          if (this.#stopped) return
          failures += 1
          await this.#recover(error, failures)
          pending = this.#fetchFrom(node, new Map())
          continue
        }
        failures = 0
        // The client keeps a fetch session per broker (KIP-227), shared by whatever fetched from
        // it before: an answer for a partition this request did not name is stale, never ours.
        // A partition error makes the client throw (handled above); an answer with one carries no records.
        const answers: Array<{ p: PartitionRead; answer: FetchAnswer['responses'][number]['partitions'][number] }> = []
        const after = new Map<PartitionRead, bigint>()
        for (const t of response.responses)
          for (const answer of t.partitions) {
            const p = current.requested.get(`${t.topicId}:${answer.partitionIndex}`)
            if (p === undefined || answer.errorCode !== 0) continue
            answers.push({ p, answer })
            const ends = answerEnd(answer.records ?? [])
            if (ends !== undefined) after.set(p, ends)
          }
        if (!this.#stopped && generation === this.#metadataGeneration) pending = this.#fetchFrom(node, after)
        for (const { p, answer } of answers) {
          await this.#deliver(p, answer.records ?? [], answer.abortedTransactions)
          if (this.#stopped) return
        }
      }
    } finally {
      // A fetch still in flight is waited for (its answer dropped): the next loop for this
      // broker must not send one beside it on the same fetch session.
      await pending?.answer.catch(() => {})
    }
  }

  /**
   * Sends the fetch for the partitions led by `node`, each from its position or,
   * when `after` has it, from where the answer being delivered ends; undefined
   * when nothing is left to read there.
   */
  #fetchFrom(node: number, after: Map<PartitionRead, bigint>): { answer: Promise<FetchAnswer>; requested: Map<string, PartitionRead> } | undefined {
    const position = (p: PartitionRead): bigint => {
      const ends = after.get(p)
      return ends !== undefined && ends > p.next ? ends : p.next
    }
    const parts = [...this.#partitions.values()].filter(
      (p) => p.leader === node && (this.#options.follow === true || position(p) < p.end),
    )
    if (parts.length === 0) return undefined
    const byTopic = new Map<string, PartitionRead[]>()
    // What this request names, by topic id and partition: the only answers taken.
    const requested = new Map<string, PartitionRead>()
    for (const p of parts) {
      byTopic.set(p.topicId, [...(byTopic.get(p.topicId) ?? []), p])
      requested.set(`${p.topicId}:${p.partition}`, p)
    }
    const perPartition = this.#options.maxBytesPerPartition ?? 4 * 1024 * 1024
    const answer = this.#consumer.fetch({
      node,
      isolationLevel: this.#options.readUncommitted === true ? READ_UNCOMMITTED : READ_COMMITTED,
      maxWaitTime: this.#options.maxWaitMs ?? 500,
      maxBytes: this.#options.maxBytes ?? 16 * 1024 * 1024,
      topics: [...byTopic].map(([topicId, ps]) => ({
        topicId,
        partitions: ps.map((p) => ({
          partition: p.partition,
          fetchOffset: position(p),
          partitionMaxBytes: perPartition,
          currentLeaderEpoch: -1,
          lastFetchedEpoch: -1,
        })),
      })),
    })
    // Observed by the loop, or dropped by it when it ends first.
    answer.catch(() => {})
    return { answer, requested }
  }

  async #deliver(
    p: PartitionRead,
    raw: RecordsBatch[],
    aborted: Parameters<typeof hideAbortedBatches>[1],
  ): Promise<void> {
    if (raw.length === 0) return
    const batches = this.#options.readUncommitted === true ? raw : hideAbortedBatches(raw, aborted)
    const records = fetchedRecords(batches, p.next, this.#options.follow === true ? undefined : p.end)
    const after = answerEnd(raw)!
    const next = after > p.next ? after : p.next
    if (records.length > 0 || next !== p.next)
      await this.#options.onRecords({ topic: p.topic, partition: p.partition, records, nextOffset: next })
    p.next = next
    if (p.behind && p.next >= p.end) {
      p.behind = false
      this.#remaining -= 1
      if (this.#remaining === 0) this.#resolveCaughtUp()
    }
  }

  /**
   * After a failed fetch: positions out of range moved (then at once: nothing is
   * wrong with the cluster), otherwise backoff and fresh metadata.
   */
  async #recover(error: unknown, attempt: number): Promise<void> {
    if (hasProtocolError(error, 'OFFSET_OUT_OF_RANGE') && (await this.#resetOutOfRange().catch(() => false))) return
    this.#options.onRetry?.(error, attempt)
    this.#logger.warn({ err: error, attempt }, 'reading the topics failed; retrying')
    await Promise.race([new Promise((r) => setTimeout(r, retryDelayMs(attempt))), this.#stopping])
    if (!this.#stopped) await this.#refreshMetadata(true).catch(() => {})
  }

  /**
   * OFFSET_OUT_OF_RANGE fails the whole fetch, so only the partitions actually
   * out of range move, to the earliest offset (as Java's auto.offset.reset=earliest):
   * below it, retention deleted the records; above the high watermark, the log
   * was truncated or the topic recreated. Whether anything moved.
   */
  async #resetOutOfRange(): Promise<boolean> {
    const [firsts, lasts] = await Promise.all([this.#listOffsets(EARLIEST), this.#listOffsets(LATEST)])
    let moved = false
    for (const p of this.#partitions.values()) {
      const first = firsts.get(p.topic)?.[p.partition]
      const last = lasts.get(p.topic)?.[p.partition]
      if (first === undefined || last === undefined || (p.next >= first && p.next <= last)) continue
      this.#logger.warn({ topic: p.topic, partition: p.partition, from: p.next, to: first }, 'position out of range; moved to the earliest offset')
      p.next = first
      moved = true
    }
    return moved
  }

  async #refreshMetadata(force: boolean): Promise<void> {
    const metadata = await this.#consumer.metadata({ topics: this.#options.topics, forceUpdate: force })
    for (const p of this.#partitions.values()) {
      const t = metadata.topics.get(p.topic)
      p.topicId = t?.id ?? p.topicId
      p.leader = t?.partitions[p.partition]?.leader ?? p.leader
    }
    this.#metadataGeneration += 1
  }
}
