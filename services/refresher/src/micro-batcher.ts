/**
 * Collects the inputs submitted within one turn of the event loop and runs
 * them as one batch.
 *
 * The transactional pipeline transforms a partition's records one call per
 * record, all started together (concurrency = records per transaction). Each
 * call submits here and awaits its share of the batch result, so the refresher
 * can coalesce repeats of a key across the whole consumed chunk: one API read
 * per key, one write per key.
 */
export class MicroBatcher<I, O> {
  private pending: { input: I; resolve: (out: O[]) => void; reject: (err: unknown) => void }[] = []
  private scheduled = false
  private readonly run: (inputs: I[]) => Promise<O[][]>

  /** `run` returns the outputs of each input, aligned with `inputs`. */
  constructor(run: (inputs: I[]) => Promise<O[][]>) {
    this.run = run
  }

  submit(input: I): Promise<O[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ input, resolve, reject })
      if (!this.scheduled) {
        this.scheduled = true
        // setImmediate runs after every pending microtask: all transforms started
        // in this turn have submitted by then.
        setImmediate(() => void this.flush())
      }
    })
  }

  private async flush(): Promise<void> {
    const batch = this.pending
    this.pending = []
    this.scheduled = false
    try {
      const outputs = await this.run(batch.map((p) => p.input))
      batch.forEach((p, i) => p.resolve(outputs[i] ?? []))
    } catch (err) {
      for (const p of batch) p.reject(err)
    }
  }
}
