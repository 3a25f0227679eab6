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

/**
 * The queue is three parallel arrays rather than one `{ input, resolve, reject }`
 * object per entry: every entry waits a turn or a linger with up to 2,000 others in
 * batch mode, so what it holds meanwhile survives young-generation collections, and
 * the inputs array is then handed to `execute` as it is, without a copy.
 */
export class MicroBatcher<I, O> {
  readonly #options: MicroBatcherOptions<I, O>
  #inputs: I[] = []
  #resolves: Array<(value: O) => void> = []
  #rejects: Array<(error: unknown) => void> = []
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
    const { promise, resolve, reject } = Promise.withResolvers<O>()
    this.#inputs.push(input)
    this.#resolves.push(resolve)
    this.#rejects.push(reject)
    if (this.#inputs.length >= this.#options.maxBatchSize) {
      this.flush()
    } else if (this.#timer === undefined && this.#immediate === undefined) {
      if (this.#inFlight === 0) this.#immediate = setImmediate(() => this.flush())
      else this.#timer = setTimeout(() => this.flush(), this.#options.lingerMs)
    }
    return promise
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
    const max = this.#options.maxBatchSize
    while (this.#inputs.length > 0) {
      void this.#dispatch(this.#inputs.splice(0, max), this.#resolves.splice(0, max), this.#rejects.splice(0, max))
    }
  }

  /** Entries waiting for their batch to be dispatched. */
  get queued(): number {
    return this.#inputs.length
  }

  /** Batch calls currently running. */
  get inFlight(): number {
    return this.#inFlight
  }

  async #dispatch(
    inputs: I[],
    resolves: ReadonlyArray<(value: O) => void>,
    rejects: ReadonlyArray<(error: unknown) => void>,
  ): Promise<void> {
    this.#inFlight++
    try {
      const results = await this.#options.execute(inputs)
      if (results.length !== inputs.length) {
        throw new Error(`batch function answered ${results.length} results for ${inputs.length} inputs`)
      }
      for (let i = 0; i < inputs.length; i++) {
        const result = results[i] as O | Error
        if (result instanceof Error) rejects[i]!(result)
        else resolves[i]!(result)
      }
    } catch (err) {
      for (const reject of rejects) reject(err)
    } finally {
      this.#inFlight--
    }
  }
}
