import type { TransactionalPipelineOptions } from '../pipeline-options.ts'
import type { PipelineRecord } from '../pipeline-types.ts'
import type { InFlight, PartitionState } from './partition-state.ts'

export interface TransformRunnerEvents {
  /** Moves a partition's settled records, in offset order, to its done list. */
  release(s: PartitionState): void
  /** After the releases of one turn: wake the commit loop, offer the freed budget. */
  released(): void
  /** Nothing is being transformed any more. */
  idle(): void
}

/**
 * Runs the transforms of the exactly-once loop. Per record this is the hot
 * path, so it allocates no promise of its own: a synchronous result settles in
 * a microtask (never inside the caller's loop), a promise is followed with one
 * then(), and the partitions with settled records are released together once
 * per microtask turn (one offer of the freed budget for all of them, not one
 * per record). The loop itself takes a synchronous answer at once when nothing
 * of its partition is pending (`call`, see pump in eos-pipeline.ts).
 */
export class TransformRunner {
  readonly #transform: TransactionalPipelineOptions['transform']
  readonly #signal: AbortSignal
  readonly #events: TransformRunnerEvents
  readonly #releasing = new Set<PartitionState>()
  #scheduled = false
  #inflight = 0

  constructor(transform: TransactionalPipelineOptions['transform'], signal: AbortSignal, events: TransformRunnerEvents) {
    this.#transform = transform
    this.#signal = signal
    this.#events = events
  }

  /** Transforms started and not yet settled, all partitions. */
  get inflight(): number {
    return this.#inflight
  }

  /** Calls the transform on a record of `s`: it may throw, or answer with a value or a promise. */
  call(s: PartitionState, record: PipelineRecord): unknown {
    return this.#transform(record, { attempt: s.failures + 1, signal: this.#signal })
  }

  /** Transforms the entry's record; its result settles the entry in a later microtask, never inside the caller's loop. */
  start(s: PartitionState, entry: InFlight): void {
    const epoch = s.epoch
    let result: unknown
    try {
      result = this.call(s, entry.record)
    } catch (error) {
      this.#inflight += 1
      queueMicrotask(() => this.#settle(s, epoch, entry, { ok: false, error }))
      return
    }
    this.follow(s, entry, result)
  }

  /** Settles the entry with `result` (a transform's answer, a promise or a value) once it is known. */
  follow(s: PartitionState, entry: InFlight, result: unknown): void {
    const epoch = s.epoch
    this.#inflight += 1
    if (isPromiseLike(result))
      result.then(
        (value) => this.#settle(s, epoch, entry, { ok: true, value }),
        (error: unknown) => this.#settle(s, epoch, entry, { ok: false, error }),
      )
    else queueMicrotask(() => this.#settle(s, epoch, entry, { ok: true, value: result }))
  }

  #settle(s: PartitionState, epoch: number, entry: InFlight, settled: NonNullable<InFlight['settled']>): void {
    // Written even after a seek: harmless because every record gets an entry of its own
    // that is never reused (a seek drops the window array; the old entry is read by no
    // one). A pool of entries would need the epoch checked before this write.
    entry.settled = settled
    this.#inflight -= 1
    // A seek or revocation since: the record speaks for the partition no more.
    if (s.epoch === epoch) this.#scheduleRelease(s)
    if (this.#inflight === 0) this.#events.idle()
  }

  #scheduleRelease(s: PartitionState): void {
    this.#releasing.add(s)
    if (this.#scheduled) return
    this.#scheduled = true
    queueMicrotask(() => {
      this.#scheduled = false
      const states = [...this.#releasing]
      this.#releasing.clear()
      for (const r of states) this.#events.release(r)
      this.#events.released()
    })
  }
}

export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function'
}
