import { BankSyncError } from './errors.ts'

/**
 * The callbacks' own share of the bank's token endpoint: at most `maxConcurrent`
 * code exchanges at once and `maxQueued` waiting; anything beyond is refused at
 * once (503, retry later) instead of queueing without bound. Token refreshes of
 * existing consents never wait here: the sync uses its own bank client and
 * limiter, so a flood of forged callbacks cannot delay them.
 */
export class CallbackBudget {
  readonly #maxConcurrent: number
  readonly #maxQueued: number
  #running = 0
  readonly #queue: Array<() => void> = []

  constructor(options: { maxConcurrent: number; maxQueued: number }) {
    if (!Number.isInteger(options.maxConcurrent) || options.maxConcurrent < 1)
      throw new RangeError(`maxConcurrent must be a positive integer, got ${options.maxConcurrent}`)
    if (!Number.isInteger(options.maxQueued) || options.maxQueued < 0)
      throw new RangeError(`maxQueued must be a non-negative integer, got ${options.maxQueued}`)
    this.#maxConcurrent = options.maxConcurrent
    this.#maxQueued = options.maxQueued
  }

  counts(): { running: number; queued: number } {
    return { running: this.#running, queued: this.#queue.length }
  }

  /** Runs `task` within the budget, or throws CallbackBudgetExceededError without running it. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#maxConcurrent) {
      if (this.#queue.length >= this.#maxQueued) {
        throw new CallbackBudgetExceededError(this.#maxConcurrent, this.#maxQueued)
      }
      await new Promise<void>((resolve) => this.#queue.push(resolve))
    } else {
      this.#running++
    }
    try {
      return await task()
    } finally {
      const next = this.#queue.shift()
      // The slot passes straight to the next waiter; otherwise it is freed.
      if (next !== undefined) next()
      else this.#running--
    }
  }
}

export class CallbackBudgetExceededError extends BankSyncError {
  constructor(maxConcurrent: number, maxQueued: number) {
    super(
      `too many consent callbacks at once (${maxConcurrent} running, ${maxQueued} waiting); try again in a moment`,
      { code: 'CONSENT_CALLBACKS_BUSY', retriable: true, details: { maxConcurrent, maxQueued } },
    )
  }
}
