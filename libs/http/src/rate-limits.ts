import Bottleneck from 'bottleneck'
import { ConcurrencyLimiter, LIMITER_STOPPED_MESSAGE } from './concurrency-limiter.ts'
import { HttpConfigError, LimiterStoppedError } from './errors.ts'

/**
 * Rate and concurrency limits for one credential, as data. One RequestLimiter
 * should exist per credential and be shared by every client using it, because the
 * server counts per credential, not per connection pool.
 */
export interface RateLimits {
  /** Requests in flight at once; null for no bound. */
  maxConcurrent: number | null
  /** Minimum spacing between request starts, in ms (0 = none). */
  minTimeMs: number
  /**
   * At most `requests` request starts per `intervalMs` window (a refilled
   * reservoir); null for no window limit.
   */
  perInterval: { requests: number; intervalMs: number } | null
}

export const DEFAULT_RATE_LIMITS: Readonly<RateLimits> = Object.freeze({
  maxConcurrent: 16,
  minTimeMs: 0,
  perInterval: null,
})

function positiveInt(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) {
    throw new HttpConfigError(`rate limit ${name} must be a positive integer, got ${String(value)}`, {
      setting: `limits.${name}`,
    })
  }
}

/** Merges `overrides` over the defaults and checks every field. */
export function resolveRateLimits(overrides: Partial<RateLimits> = {}): RateLimits {
  const limits: RateLimits = { ...DEFAULT_RATE_LIMITS, ...overrides }
  if (limits.maxConcurrent !== null) positiveInt('maxConcurrent', limits.maxConcurrent)
  if (!Number.isFinite(limits.minTimeMs) || limits.minTimeMs < 0) {
    throw new HttpConfigError(
      `rate limit minTimeMs must be a non-negative number, got ${String(limits.minTimeMs)}`,
      { setting: 'limits.minTimeMs' },
    )
  }
  if (limits.perInterval !== null) {
    positiveInt('perInterval.requests', limits.perInterval.requests)
    positiveInt('perInterval.intervalMs', limits.perInterval.intervalMs)
  }
  return limits
}

/** Schedules work under a credential's limits. */
export interface RequestLimiter {
  readonly limits: Readonly<RateLimits>
  /** Runs `task` when the limits allow it; resolves or rejects with its outcome. */
  schedule<T>(task: () => Promise<T>): Promise<T>
  /** Jobs waiting for a slot and jobs running now. */
  counts(): { queued: number; running: number }
  /** Rejects queued jobs and waits for running ones. */
  stop(): Promise<void>
  /**
   * Asks that no new request of this credential starts before `epochMs` (the
   * server answered 429/503 with Retry-After: its limit is per credential, so
   * every caller should hold back, not only the one that was told). Only ever
   * moves the moment later. Optional so that stand-in limiters stay valid.
   */
  pauseUntil?(epochMs: number): void
  /** The moment set by `pauseUntil` (0 when never paused). */
  readonly resumeAt?: number
}

/**
 * Creates the limiter for one credential. With only a concurrency bound (the
 * common case) it is a lean in-process semaphore, because every request passes
 * through it; a spacing (`minTimeMs`) or a rate window (`perInterval`) brings in
 * bottleneck, which implements those.
 */
export function createRequestLimiter(overrides: Partial<RateLimits> = {}): RequestLimiter {
  const limits = resolveRateLimits(overrides)
  const scheduler: Scheduler =
    limits.minTimeMs === 0 && limits.perInterval === null
      ? new ConcurrencyLimiter(limits.maxConcurrent)
      : bottleneckScheduler(limits)
  let resumeAt = 0
  return {
    limits: Object.freeze({ ...limits }),
    schedule<T>(task: () => Promise<T>): Promise<T> {
      return scheduler.schedule(task)
    },
    counts() {
      return scheduler.counts()
    },
    pauseUntil(epochMs: number) {
      if (Number.isFinite(epochMs) && epochMs > resumeAt) resumeAt = epochMs
    },
    get resumeAt() {
      return resumeAt
    },
    stop() {
      return scheduler.stop(LIMITER_STOPPED_MESSAGE)
    },
  }
}

type Scheduler = Pick<RequestLimiter, 'schedule' | 'counts'> & { stop(message: string): Promise<void> }

function bottleneckScheduler(limits: RateLimits): Scheduler {
  const bottleneck = new Bottleneck({
    maxConcurrent: limits.maxConcurrent,
    minTime: limits.minTimeMs,
    ...(limits.perInterval === null
      ? {}
      : {
          reservoir: limits.perInterval.requests,
          reservoirRefreshAmount: limits.perInterval.requests,
          reservoirRefreshInterval: limits.perInterval.intervalMs,
        }),
  })
  let stopping: Promise<void> | undefined
  return {
    schedule: (task) =>
      // The same error type as the semaphore's for jobs dropped by stop (the task's own errors pass through).
      bottleneck.schedule(task).catch((err: unknown) => {
        throw err instanceof Bottleneck.BottleneckError ? new LimiterStoppedError(err.message, err) : err
      }),
    counts() {
      const c = bottleneck.counts()
      return { queued: (c.RECEIVED ?? 0) + (c.QUEUED ?? 0), running: (c.RUNNING ?? 0) + (c.EXECUTING ?? 0) }
    },
    stop(message) {
      stopping ??= bottleneck.stop({ dropWaitingJobs: true, dropErrorMessage: message })
      return stopping
    },
  }
}
