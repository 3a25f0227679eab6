import { LimiterStoppedError } from './errors.ts'

/** Message of the error a job still waiting for a slot gets when its limiter stops. */
export const LIMITER_STOPPED_MESSAGE = 'the HTTP client was closed before this request could start'

interface Waiting {
  task: () => Promise<unknown>
  resolve: (value: unknown) => void
  reject: (reason: unknown) => void
}

/**
 * A FIFO counting semaphore: at most `maxConcurrent` tasks run at once (no bound
 * when null), the others wait in arrival order.
 *
 * It exists because the request path is hot. A task that finds a free slot starts
 * synchronously inside `schedule`, with no timer, queue object or extra promise
 * hops in between; a general-purpose scheduler (bottleneck) spends several times
 * the cost of the HTTP exchange itself on every job, even with no rate limit set.
 * Rate windows and spacing are not this class's job: `createRequestLimiter` uses
 * bottleneck when those are configured.
 */
export class ConcurrencyLimiter {
  readonly #max: number
  #running = 0
  // A growing array with a moving head: O(1) enqueue and dequeue without
  // per-entry nodes; compacted when the dead prefix dominates.
  #queue: Array<Waiting | undefined> = []
  #head = 0
  #stopped = false
  #idle: (() => void) | undefined

  constructor(maxConcurrent: number | null) {
    this.#max = maxConcurrent ?? Number.POSITIVE_INFINITY
  }

  schedule<T>(task: () => Promise<T>): Promise<T> {
    if (this.#stopped)
      return Promise.reject(
        new LimiterStoppedError('the request limiter has been stopped (its HTTP client was closed)'),
      )
    if (this.#running < this.#max) return this.#start(task)
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ task, resolve: resolve as (value: unknown) => void, reject })
    })
  }

  counts(): { queued: number; running: number } {
    return { queued: this.#queue.length - this.#head, running: this.#running }
  }

  /** Rejects waiting jobs with LimiterStoppedError(`message`) and resolves once running ones have finished. */
  async stop(message = LIMITER_STOPPED_MESSAGE): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true
      const waiting = this.#queue
      const head = this.#head
      this.#queue = []
      this.#head = 0
      for (let i = head; i < waiting.length; i++) waiting[i]!.reject(new LimiterStoppedError(message))
    }
    if (this.#running === 0) return
    await new Promise<void>((resolve) => {
      const previous = this.#idle
      this.#idle = () => {
        previous?.()
        resolve()
      }
    })
  }

  #start<T>(task: () => Promise<T>): Promise<T> {
    this.#running++
    let running: Promise<T>
    try {
      running = task()
    } catch (err) {
      // A task that throws before returning its promise must still give its slot back.
      running = Promise.reject(err)
    }
    return running.finally(() => this.#release())
  }

  #release(): void {
    this.#running--
    const next = this.#dequeue()
    if (next !== undefined) {
      this.#start(next.task).then(next.resolve, next.reject)
      return
    }
    if (this.#running === 0 && this.#idle !== undefined) {
      const idle = this.#idle
      this.#idle = undefined
      idle()
    }
  }

  #dequeue(): Waiting | undefined {
    if (this.#head === this.#queue.length) return undefined
    const next = this.#queue[this.#head]
    this.#queue[this.#head++] = undefined
    if (this.#head === this.#queue.length) {
      this.#queue.length = 0
      this.#head = 0
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head)
      this.#head = 0
    }
    return next
  }
}
