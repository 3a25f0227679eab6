import { describe, expect, it } from 'vitest'
import { HttpConfigError, LimiterStoppedError } from './errors.ts'
import { DEFAULT_RATE_LIMITS, createRequestLimiter, resolveRateLimits } from './rate-limits.ts'

describe('resolveRateLimits', () => {
  it('defaults and validates', () => {
    expect(resolveRateLimits()).toEqual(DEFAULT_RATE_LIMITS)
    expect(() => resolveRateLimits({ maxConcurrent: 0 })).toThrow(HttpConfigError)
    expect(() => resolveRateLimits({ maxConcurrent: 0 })).toThrow(
      /maxConcurrent must be a positive integer, got 0/,
    )
    expect(() => resolveRateLimits({ minTimeMs: -1 })).toThrow(/minTimeMs must be a non-negative number/)
    expect(() => resolveRateLimits({ perInterval: { requests: 0, intervalMs: 1000 } })).toThrow(
      /perInterval.requests/,
    )
    expect(resolveRateLimits({ maxConcurrent: null }).maxConcurrent).toBeNull()
  })
})

/** Polls (each turn of the event loop) until `condition` holds; the limiter starts jobs asynchronously. */
async function until(condition: () => boolean, deadlineMs = 5_000): Promise<void> {
  const deadline = Date.now() + deadlineMs
  while (!condition()) {
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${deadlineMs} ms: ${condition.toString()}`)
    await new Promise((r) => setImmediate(r))
  }
}

describe('createRequestLimiter', () => {
  it('never runs more than maxConcurrent tasks at once, and runs them all', async () => {
    const limiter = createRequestLimiter({ maxConcurrent: 3 })
    let running = 0
    let maxRunning = 0
    const releases: Array<() => void> = []
    const started: number[] = []
    const tasks = Array.from({ length: 10 }, (_, i) =>
      limiter.schedule(async () => {
        running++
        maxRunning = Math.max(maxRunning, running)
        started.push(i)
        await new Promise<void>((resolve) => releases.push(resolve))
        running--
        return i
      }),
    )
    // Each time the limiter has filled its slots, release one task; a queued one must take its place.
    const all = Promise.all(tasks)
    for (let remaining = 10; remaining > 0; remaining--) {
      await until(() => releases.length === Math.min(3, remaining))
      expect(running).toBeLessThanOrEqual(3)
      releases.shift()!()
    }
    expect(await all).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(maxRunning).toBe(3)
    await limiter.stop()
  })

  it('rejects jobs still queued when stopped', async () => {
    const limiter = createRequestLimiter({ maxConcurrent: 1 })
    let release!: () => void
    const first = limiter.schedule(() => new Promise<string>((r) => (release = () => r('done'))))
    const queued = limiter.schedule(async () => 'never')
    await until(() => limiter.counts().running === 1)
    expect(limiter.counts()).toEqual({ queued: 1, running: 1 })
    const stopping = limiter.stop()
    await expect(queued).rejects.toThrow(/closed before this request could start/)
    release()
    await expect(first).resolves.toBe('done')
    await stopping
  })

  it('pauseUntil only ever moves the resume moment later', async () => {
    const limiter = createRequestLimiter()
    expect(limiter.resumeAt).toBe(0)
    limiter.pauseUntil?.(5_000)
    limiter.pauseUntil?.(3_000)
    limiter.pauseUntil?.(Number.NaN)
    expect(limiter.resumeAt).toBe(5_000)
    await limiter.stop()
  })

  it('still enforces a rate window: starts beyond perInterval.requests wait for the refill', async () => {
    const limiter = createRequestLimiter({
      maxConcurrent: null,
      perInterval: { requests: 2, intervalMs: 60_000 },
    })
    const started: number[] = []
    const jobs = [0, 1, 2].map((i) =>
      limiter.schedule(async () => {
        started.push(i)
        return i
      }),
    )
    await expect(Promise.all(jobs.slice(0, 2))).resolves.toEqual([0, 1])
    await until(() => limiter.counts().queued === 1)
    expect(started).toEqual([0, 1])
    const stopping = limiter.stop()
    await expect(jobs[2]).rejects.toThrow(/closed before this request could start/)
    await stopping
    expect(started).toEqual([0, 1])
  })

  it('uses the same stop message whichever scheduler backs it, and stop can be called twice', async () => {
    for (const limits of [{ maxConcurrent: 1 }, { maxConcurrent: 1, minTimeMs: 5 }]) {
      const limiter = createRequestLimiter(limits)
      let release!: () => void
      const first = limiter.schedule(() => new Promise<void>((r) => (release = r)))
      const queued = limiter.schedule(async () => 'never')
      await until(() => limiter.counts().running === 1 && limiter.counts().queued === 1)
      const stopping = limiter.stop()
      await expect(queued).rejects.toThrow(/closed before this request could start/)
      await expect(queued).rejects.toBeInstanceOf(LimiterStoppedError)
      release()
      await first
      await stopping
      await limiter.stop()
    }
  })
})
