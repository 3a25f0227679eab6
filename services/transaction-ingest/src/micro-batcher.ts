/**
 * DataLoader-style micro-batching: callers ask for one item at a time, the
 * batcher groups concurrent requests into one call of up to `maxBatchSize`
 * entries, dispatched as soon as it is full, otherwise (Nagle's rule) at the
 * end of the event-loop turn while no call is in flight, or `lingerMs` after
 * its first entry while one is. One batcher is shared by every in-flight record
 * of the process, so records of different partitions and Kafka batches fill the
 * same API batch.
 *
 * Why not always linger: under light input (1,000 ev/s, a fetch answer of ten
 * records every 10 ms) no batch ever filled, so every record waited the whole
 * linger before its lookup started, on the latency path of every event. The
 * records of one fetch answer are handed over in one turn, so the end of the
 * turn still groups them; under load calls are in flight and batches fill.
 *
 * `execute` answers with one element per input, in input order; an element that
 * is an `Error` fails only that entry. If `execute` throws, every entry of that
 * batch fails with the same error.
 */
export interface MicroBatcherOptions<I, O> {
  maxBatchSize: number
  lingerMs: number
  execute: (inputs: readonly I[]) => Promise<ReadonlyArray<O | Error>>
}

interface Pending<I, O> {
  input: I
  resolve: (value: O) => void
  reject: (error: unknown) => void
}

export class MicroBatcher<I, O> {
  readonly #options: MicroBatcherOptions<I, O>
  #queue: Pending<I, O>[] = []
  #timer: NodeJS.Timeout | undefined
  #immediate: NodeJS.Immediate | undefined
  #inFlight = 0

  constructor(options: MicroBatcherOptions<I, O>) {
    if (!Number.isInteger(options.maxBatchSize) || options.maxBatchSize < 1) {
      throw new RangeError(`maxBatchSize must be a positive integer, got ${options.maxBatchSize}`)
    }
    if (!(options.lingerMs >= 0)) throw new RangeError(`lingerMs must be >= 0, got ${options.lingerMs}`)
    this.#options = options
  }

  load(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ input, resolve, reject })
      if (this.#queue.length >= this.#options.maxBatchSize) {
        this.flush()
      } else if (this.#timer === undefined && this.#immediate === undefined) {
        if (this.#inFlight === 0) this.#immediate = setImmediate(() => this.flush())
        else this.#timer = setTimeout(() => this.flush(), this.#options.lingerMs)
      }
    })
  }

  /** Dispatches whatever is queued now (used by the linger timer, on size, and on shutdown). */
  flush(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer)
      this.#timer = undefined
    }
    if (this.#immediate !== undefined) {
      clearImmediate(this.#immediate)
      this.#immediate = undefined
    }
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#options.maxBatchSize)
      void this.#dispatch(batch)
    }
  }

  /** Entries waiting for their batch to be dispatched. */
  get queued(): number {
    return this.#queue.length
  }

  /** Batch calls currently running. */
  get inFlight(): number {
    return this.#inFlight
  }

  async #dispatch(batch: Pending<I, O>[]): Promise<void> {
    this.#inFlight++
    try {
      const results = await this.#options.execute(batch.map((p) => p.input))
      if (results.length !== batch.length) {
        throw new Error(`batch function answered ${results.length} results for ${batch.length} inputs`)
      }
      for (let i = 0; i < batch.length; i++) {
        const result = results[i] as O | Error
        const pending = batch[i] as Pending<I, O>
        if (result instanceof Error) pending.reject(result)
        else pending.resolve(result)
      }
    } catch (err) {
      for (const pending of batch) pending.reject(err)
    } finally {
      this.#inFlight--
    }
  }
}
