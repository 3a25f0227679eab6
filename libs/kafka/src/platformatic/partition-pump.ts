import type { MessagesStream } from '@platformatic/kafka'
import { isRecordFailure, type TransactionalPipelineOptions } from '../pipeline-options.ts'
import type { OutputRecord } from '../pipeline-types.ts'
import { toPipelineRecord } from './eos-transaction.ts'
import type { InputMessage } from './input-message.ts'
import { bufferedCount, windowedCount, type InFlight, type PartitionState } from './partition-state.ts'
import { isPromiseLike, TransformRunner } from './transform-runner.ts'

/** What the pump needs of the exactly-once loop around it (eos-pipeline.ts). */
export interface PumpHost {
  /** The assigned partitions, by `topic:partition`. */
  readonly parts: ReadonlyMap<string, PartitionState>
  isRunning(): boolean
  /** A systemic failure of the record at `offset`: nothing from it on is committed; redo after a backoff. */
  pauseAndBackOff(s: PartitionState, offset: bigint, error: unknown): void
  /** Records reached `done` (or nothing is transformed any more): the commit loop may take them. */
  finished(): void
  /** The current consumer's stream: paused while too much is buffered. */
  stream(): MessagesStream<Buffer, Buffer, Buffer, Buffer> | undefined
}

export interface PumpLimits {
  /** Records transformed at once over all partitions. */
  maxInFlight: number
  /** Records of one partition waiting in `done` (a transaction's worth). */
  maxPerTxn: number
  /** Records received and not yet committed at which the stream pauses its fetches. */
  highWater: number
}

/**
 * The transforms of the exactly-once loop, per partition in offset order: the
 * records of each fetch are queued, started while the in-flight budget has
 * room, and moved to `done` in offset order once settled, where the commit
 * loop takes them into a transaction. While nothing of a partition is pending,
 * a synchronous answer goes to `done` at once, without an in-flight entry or a
 * microtask (an identity or a table lookup answers so); once one record is
 * pending, later ones wait their turn in the window (TransformRunner).
 */
export class PartitionPump {
  readonly #host: PumpHost
  readonly #limits: PumpLimits
  readonly #runner: TransformRunner
  /** Where pumpAll starts, so that freed budget goes round the partitions. */
  #rotation = 0

  constructor(transform: TransactionalPipelineOptions['transform'], signal: AbortSignal, limits: PumpLimits, host: PumpHost) {
    this.#host = host
    this.#limits = limits
    this.#runner = new TransformRunner(transform, signal, {
      release: (s) => this.#release(s),
      released: () => {
        host.finished()
        this.#pumpAll()
      },
      idle: () => host.finished(),
    })
  }

  /** Transforms started and not yet settled, all partitions. */
  get inflight(): number {
    return this.#runner.inflight
  }

  /** The records of one partition from one fetch (FetchControl dropped those of fetches issued before a seek or a rebalance). */
  onRecords(topic: string, partition: number, messages: InputMessage[]): void {
    const s = this.#host.parts.get(`${topic}:${partition}`)
    if (s === undefined || s.paused) return
    // Records below the position were received before (the stream went back on its own,
    // after an out-of-range answer or a rejoin): the position only moves forward.
    let last: bigint | undefined
    for (const message of messages) {
      if (s.position !== undefined && message.offset < s.position) continue
      s.queue.push(message)
      last = message.offset
    }
    if (last !== undefined) s.position = last + 1n
    if (bufferedCount(this.#host.parts.values()) >= this.#limits.highWater) this.#host.stream()?.pause()
    this.pump(s)
  }

  /** Starts transforms of the partition's queued records while the in-flight budget has room. */
  pump(s: PartitionState): void {
    const host = this.#host
    const { maxInFlight, maxPerTxn, highWater } = this.#limits
    let room = maxInFlight - windowedCount(host.parts.values())
    let finished = false
    while (host.isRunning() && host.parts.get(s.key) === s && !s.paused && s.floorKnown && s.queue.length > 0 && room > 0 && s.done.length < maxPerTxn) {
      const message = s.queue.shift()!
      const record = toPipelineRecord(message)
      if (s.window.length > 0) {
        const entry: InFlight = { message, record, settled: undefined }
        s.window.push(entry)
        room -= 1
        this.#runner.start(s, entry)
        continue
      }
      let result: unknown
      try {
        result = this.#runner.call(s, record)
      } catch (error) {
        if (!isRecordFailure(error)) {
          host.pauseAndBackOff(s, message.offset, error)
          break
        }
        s.done.push({ message, outcome: { kind: 'dead-letter', record, error } })
        finished = true
        continue
      }
      if (isPromiseLike(result)) {
        const entry: InFlight = { message, record, settled: undefined }
        s.window.push(entry)
        room -= 1
        this.#runner.follow(s, entry, result)
        continue
      }
      s.done.push({ message, outcome: { kind: 'outputs', record, outputs: outputsOf(result) } })
      finished = true
    }
    if (finished) host.finished()
    const stream = host.stream()
    if (stream?.isPaused() && bufferedCount(host.parts.values()) < highWater / 2) stream.resume()
  }

  /** Offers freed budget to every partition in turn, so that one partition's backlog does not starve the others. */
  #pumpAll(): void {
    const states = [...this.#host.parts.values()]
    if (states.length === 0) return
    this.#rotation = (this.#rotation + 1) % states.length
    for (let i = 0; i < states.length; i++) this.pump(states[(this.#rotation + i) % states.length]!)
  }

  /**
   * Moves the settled head of the window, in offset order, to `done`; a
   * systemic failure pauses the partition. The runner then wakes the commit
   * loop and offers the freed budget.
   */
  #release(s: PartitionState): void {
    while (s.window.length > 0 && s.window[0]!.settled !== undefined) {
      const entry = s.window.shift()!
      const settled = entry.settled!
      if (settled.ok) {
        s.done.push({ message: entry.message, outcome: { kind: 'outputs', record: entry.record, outputs: outputsOf(settled.value) } })
      } else if (isRecordFailure(settled.error)) {
        s.done.push({ message: entry.message, outcome: { kind: 'dead-letter', record: entry.record, error: settled.error } })
      } else {
        // Nothing of this record or later ones is committed: redo from here after a backoff.
        if (this.#host.isRunning()) this.#host.pauseAndBackOff(s, entry.message.offset, settled.error)
        else s.window = []
        break
      }
    }
  }
}

/** A transform's answer as the list of records it writes. */
function outputsOf(value: unknown): OutputRecord[] {
  const v = value as OutputRecord[] | OutputRecord | undefined
  return v === undefined ? [] : Array.isArray(v) ? v : [v]
}
