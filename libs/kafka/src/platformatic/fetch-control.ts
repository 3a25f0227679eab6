import type { Callback, Consumer, MessageConsumerMetadata, RecordsBatch } from '@platformatic/kafka'
import { hideAbortedBatches } from './aborted-filter.ts'
import { fetchedMessages, type FetchedMessage } from './input-message.ts'
import { hasProtocolError } from './protocol-errors.ts'

/** Takes the records of one partition from one fetch, in offset order. */
export type DeliverRecords = (topic: string, partition: number, messages: FetchedMessage[]) => void

type FetchResponse = Awaited<ReturnType<Consumer['fetch']>>

type FetchArgs = Parameters<Consumer['fetch']>[0]
type RealFetch = (options: FetchArgs, callback: Callback<FetchResponse>) => void

/** How long a fetch with every partition paused "waits" before answering empty. */
const ALL_PAUSED_WAIT_MS = 100

/** Kafka's error code for a fetch offset outside the partition's log. */
const OFFSET_OUT_OF_RANGE = 1

/**
 * A partition whose fetch offset was outside its log: below the log start (retention or
 * DeleteRecords removed the records before they were read) or past its end (the log was
 * truncated). The client then moves the fetch to the log start or to its end, by its
 * fallback mode, and would do so without a word.
 */
export interface FetchOutOfRange {
  topic: string
  partition: number
  /** The offset the fetch asked for. */
  requestedOffset: bigint
  logStartOffset: bigint
  highWatermark: bigint
}

export interface FetchControlOptions {
  /**
   * Told of every partition a fetch found out of range, before the client moves its fetch
   * offset. Returning true holds the partition: it is fetched no more (until a rebalance),
   * so nothing past the gap is read while the caller decides what to do.
   */
  onOutOfRange?: (event: FetchOutOfRange) => boolean
}

/**
 * The partitions a failed fetch found out of range, from the answer the error carries
 * (the client fails the whole fetch when one partition is out of range). `topicNames` maps
 * topic ids to names; `requested` gives the offset each `topicId:partition` was fetched from.
 */
export function outOfRangePartitions(
  error: unknown,
  topicNames: ReadonlyMap<string, string>,
  requested: ReadonlyMap<string, bigint>,
): FetchOutOfRange[] {
  const response = (error as { response?: { responses?: unknown } } | null)?.response
  if (!hasProtocolError(error, 'OFFSET_OUT_OF_RANGE') || !Array.isArray(response?.responses)) return []
  const found: FetchOutOfRange[] = []
  for (const t of response.responses as Array<{ topicId: string; partitions: Array<{ partitionIndex: number; errorCode: number; logStartOffset: bigint; highWatermark: bigint }> }>) {
    const topic = topicNames.get(t.topicId)
    if (topic === undefined) continue
    for (const p of t.partitions) {
      const from = requested.get(`${t.topicId}:${p.partitionIndex}`)
      if (p.errorCode !== OFFSET_OUT_OF_RANGE || from === undefined) continue
      found.push({ topic, partition: p.partitionIndex, requestedOffset: from, logStartOffset: p.logStartOffset, highWatermark: p.highWatermark })
    }
  }
  return found
}

/**
 * Per-partition pause and seek for a @platformatic/kafka MessagesStream, which
 * has neither (only whole-stream pause), and the records of its fetches handed
 * to the loop as they were parsed. It wraps `consumer.fetch`, the one call
 * through which the stream fetches:
 * - a paused partition is left out of each fetch request, so it costs nothing;
 * - a seek sets the stream's next fetch offset and bumps the partition's epoch;
 *   the records of a fetch that was issued before the seek (or before a
 *   rebalance) are dropped from its response, so neither they nor the offset
 *   the stream would derive from them ever arrive;
 * - the records of each answer go to `deliver` (input-message.ts), and the
 *   stream sees its batches empty: it still tracks offsets, leader epochs,
 *   out-of-range recovery and backpressure (pause stops its fetches), but it
 *   makes no message object of its own per record. Since nothing is buffered
 *   in the stream any more, a record is checked against seeks when it arrives.
 * It also hides aborted transactions the client's own read_committed filter lets
 * through (aborted-filter.ts), and reports a fetch offset out of range (see
 * FetchOutOfRange) before the stream recovers from it. Partitions are keyed
 * `topicId:partition` on the wire; `topicIds` maps names.
 */
export class FetchControl {
  readonly #options: FetchControlOptions
  readonly #paused = new Set<string>()
  readonly #epochs = new Map<string, number>()
  readonly #topicIds = new Map<string, string>()
  readonly #topicNames = new Map<string, string>()
  /** Bumped by every rebalance: fetches issued before belong to the old assignment. */
  #generation = 0
  #offsetsToFetch: Map<string, bigint> | undefined

  constructor(options: FetchControlOptions = {}) {
    this.#options = options
  }

  /** Routes the consumer's fetches through here; their records go to `deliver`, one call per partition and fetch. */
  install(consumer: Consumer, deliver: DeliverRecords): void {
    const real = consumer.fetch.bind(consumer) as unknown as RealFetch
    const wrapped = (options: FetchArgs, callback?: Callback<FetchResponse>) => {
      if (callback === undefined) return (real as unknown as (o: FetchArgs) => Promise<FetchResponse>)(options)
      this.#fetch(real, consumer, deliver, options, callback)
      return undefined
    }
    consumer.fetch = wrapped as unknown as Consumer['fetch']
  }

  /** The stream whose fetch offsets seeks move. */
  attach(offsetsToFetch: Map<string, bigint>): void {
    this.#offsetsToFetch = offsetsToFetch
  }

  setTopicId(topic: string, id: string): void {
    this.#topicIds.set(topic, id)
    this.#topicNames.set(id, topic)
  }

  pause(topic: string, partition: number): void {
    this.#paused.add(this.#wireKey(topic, partition))
  }

  resume(topic: string, partition: number): void {
    this.#paused.delete(this.#wireKey(topic, partition))
  }

  /** The next fetch of the partition starts at `offset`; records of fetches in flight are dropped. */
  seek(topic: string, partition: number, offset: bigint): void {
    this.#bump(this.#wireKey(topic, partition))
    this.#offsetsToFetch?.set(`${topic}:${partition}`, offset)
  }

  /** After a rebalance: every fetch in flight belongs to the old assignment. */
  invalidateAll(): void {
    this.#generation += 1
    this.#paused.clear()
  }

  #bump(key: string): void {
    this.#epochs.set(key, (this.#epochs.get(key) ?? 0) + 1)
  }

  #wireKey(topic: string, partition: number): string {
    return `${this.#topicIds.get(topic) ?? topic}:${partition}`
  }

  #fetch(real: RealFetch, consumer: Consumer, deliver: DeliverRecords, options: FetchArgs, callback: Callback<FetchResponse>): void {
    const issued = new Map<string, { epoch: number; from: bigint }>()
    const generation = this.#generation
    const topics = options.topics
      .map((t) => ({
        ...t,
        partitions: t.partitions.filter((p) => !this.#paused.has(`${t.topicId}:${p.partition}`)),
      }))
      .filter((t) => t.partitions.length > 0)
    for (const t of topics)
      for (const p of t.partitions) {
        const key = `${t.topicId}:${p.partition}`
        issued.set(key, { epoch: this.#epochs.get(key) ?? 0, from: p.fetchOffset })
      }
    if (topics.length === 0) {
      // Everything paused: answer "no records" after a while, like a long poll would.
      setTimeout(() => callback(null, { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [] } as unknown as FetchResponse), ALL_PAUSED_WAIT_MS)
      return
    }
    real({ ...options, topics }, (error, response) => {
      const taken: Taken[] = []
      if (error && this.#options.onOutOfRange !== undefined) {
        const from = new Map([...issued].filter(([key]) => this.#isCurrent(key, generation, issued.get(key)?.epoch)).map(([key, i]) => [key, i.from]))
        for (const e of outOfRangePartitions(error, this.#topicNames, from))
          if (this.#options.onOutOfRange(e)) this.#paused.add(this.#wireKey(e.topic, e.partition))
      }
      if (!error && response !== undefined) {
        for (const t of response.responses)
          for (const p of t.partitions) {
            const key = `${t.topicId}:${p.partitionIndex}`
            if (!this.#isCurrent(key, generation, issued.get(key)?.epoch)) (p as { records?: unknown }).records = undefined
            else if (p.records) {
              // The records go to the loop; the stream gets the batches emptied, so that it
              // still advances its fetch offset past them and keeps its leader epochs, but
              // makes no message of its own.
              const batches = hideAbortedBatches(p.records, p.abortedTransactions)
              taken.push({ key, topicId: t.topicId, partition: p.partitionIndex, batches, from: issued.get(key)!.from })
              p.records = batches.map((b) => (b.records.length === 0 ? b : { ...b, records: [] }))
            }
          }
      }
      // The stream first: it sets its next fetch offsets from this answer, so a seek the
      // loop makes while it takes the records (a systemic failure) must come after.
      callback(error, response)
      if (taken.length === 0) return
      // What the stream's own messages carried: the group generation they were fetched under.
      const member = { groupId: consumer.groupId, generationId: consumer.generationId, memberId: consumer.memberId, coordinatorId: consumer.coordinatorId } as MessageConsumerMetadata
      for (const d of taken) {
        // Taking one partition's records can seek or pause that partition only; checked again all the same.
        if (!this.#isCurrent(d.key, generation, issued.get(d.key)?.epoch)) continue
        const topic = this.#topicNames.get(d.topicId)
        if (topic === undefined) continue
        const messages = fetchedMessages(topic, d.partition, d.batches, d.from, member)
        if (messages.length > 0) deliver(topic, d.partition, messages)
      }
    })
  }

  #isCurrent(key: string, generation: number, epoch: number | undefined): boolean {
    return generation === this.#generation && epoch === (this.#epochs.get(key) ?? 0) && !this.#paused.has(key)
  }
}

interface Taken {
  key: string
  topicId: string
  partition: number
  batches: RecordsBatch[]
  from: bigint
}
