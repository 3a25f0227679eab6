import type { TransactionalPipelineOptions } from '../pipeline-options.ts'
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
 * per record).
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

  start(s: PartitionState, entry: InFlight): void {
    const epoch = s.epoch
    this.#inflight += 1
    const settle = (settled: NonNullable<InFlight['settled']>): void => {
      // Written even after a seek: harmless because every record gets an entry of its own
      // that is never reused (a seek drops the window array; the old entry is read by no
      // one). A pool of entries would need the epoch checked before this write.
      entry.settled = settled
      this.#inflight -= 1
      // A seek or revocation since: the record speaks for the partition no more.
      if (s.epoch === epoch) this.#scheduleRelease(s)
      if (this.#inflight === 0) this.#events.idle()
    }
    let result: unknown
    try {
      result = this.#transform(entry.record, { attempt: s.failures + 1, signal: this.#signal })
    } catch (error) {
      queueMicrotask(() => settle({ ok: false, error }))
      return
    }
    if (isPromiseLike(result))
      result.then(
        (value) => settle({ ok: true, value }),
        (error: unknown) => settle({ ok: false, error }),
      )
    else queueMicrotask(() => settle({ ok: true, value: result }))
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

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function'
}
