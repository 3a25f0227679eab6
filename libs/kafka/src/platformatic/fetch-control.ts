import type { Callback, Consumer } from '@platformatic/kafka'
import { hideAbortedBatches } from './aborted-filter.ts'

type FetchResponse = Awaited<ReturnType<Consumer['fetch']>>

type FetchArgs = Parameters<Consumer['fetch']>[0]
type RealFetch = (options: FetchArgs, callback: Callback<FetchResponse>) => void

/** Metadata key of the fetch stamp (the stream copies record metadata into each message). */
const FETCH_STAMP = 'tepFetch'

/** How long a fetch with every partition paused "waits" before answering empty. */
const ALL_PAUSED_WAIT_MS = 100

/**
 * Per-partition pause and seek for a @platformatic/kafka MessagesStream, which
 * has neither (only whole-stream pause). It wraps `consumer.fetch`, the one
 * call through which the stream fetches:
 * - a paused partition is left out of each fetch request, so it costs nothing;
 * - a seek sets the stream's next fetch offset and bumps the partition's epoch;
 *   the records of a fetch that was issued before the seek (or before a
 *   rebalance) are dropped from its response, so neither they nor the offset
 *   the stream would derive from them ever arrive.
 * It also hides aborted transactions the client's own read_committed filter lets
 * through (aborted-filter.ts). Partitions are keyed `topicId:partition` on the
 * wire; `topicIds` maps names.
 */
export class FetchControl {
  readonly #paused = new Set<string>()
  readonly #epochs = new Map<string, number>()
  readonly #topicIds = new Map<string, string>()
  /** Bumped by every rebalance: fetches issued before belong to the old assignment. */
  #generation = 0
  #offsetsToFetch: Map<string, bigint> | undefined

  install(consumer: Consumer): void {
    const real = consumer.fetch.bind(consumer) as unknown as RealFetch
    const wrapped = (options: FetchArgs, callback?: Callback<FetchResponse>) => {
      if (callback === undefined) return (real as unknown as (o: FetchArgs) => Promise<FetchResponse>)(options)
      this.#fetch(real, options, callback)
      return undefined
    }
    consumer.fetch = wrapped as unknown as Consumer['fetch']
  }

  /** False for a message fetched before the last seek of its partition or the last rebalance. */
  isCurrent(message: { topic: string; partition: number; metadata: Record<string, unknown> }): boolean {
    const key = this.#wireKey(message.topic, message.partition)
    return message.metadata[FETCH_STAMP] === `${this.#generation}/${this.#epochs.get(key) ?? 0}`
  }

  /** The stream whose fetch offsets seeks move. */
  attach(offsetsToFetch: Map<string, bigint>): void {
    this.#offsetsToFetch = offsetsToFetch
  }

  setTopicId(topic: string, id: string): void {
    this.#topicIds.set(topic, id)
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

  #fetch(real: RealFetch, options: FetchArgs, callback: Callback<FetchResponse>): void {
    const issued = new Map<string, number>()
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
        issued.set(key, this.#epochs.get(key) ?? 0)
      }
    if (topics.length === 0) {
      // Everything paused: answer "no records" after a while, like a long poll would.
      setTimeout(() => callback(null, { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [] } as unknown as FetchResponse), ALL_PAUSED_WAIT_MS)
      return
    }
    real({ ...options, topics }, (error, response) => {
      if (!error && response !== undefined) {
        for (const t of response.responses)
          for (const p of t.partitions) {
            const key = `${t.topicId}:${p.partitionIndex}`
            if (generation !== this.#generation || issued.get(key) !== (this.#epochs.get(key) ?? 0) || this.#paused.has(key))
              (p as { records?: unknown }).records = undefined
            else if (p.records) {
              p.records = hideAbortedBatches(p.records, p.abortedTransactions)
              // Stamp every record with the fetch it came from: the stream may hold
              // records in its buffer across a seek, and isCurrent() drops those.
              const stamp = { [FETCH_STAMP]: `${generation}/${issued.get(key)}` }
              for (const batch of p.records) for (const record of batch.records) (record as { metadata?: unknown }).metadata = stamp
            }
          }
      }
      callback(error, response)
    })
  }
}
