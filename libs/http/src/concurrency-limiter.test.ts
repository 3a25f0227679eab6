import { describe, expect, it } from 'vitest'
import { ConcurrencyLimiter } from './concurrency-limiter.ts'
import { LimiterStoppedError } from './errors.ts'

/** A task that stays running until the test releases it. */
function gate<T>(value: T): { task: () => Promise<T>; release: () => void; started: () => boolean } {
  let release!: () => void
  let started = false
  return {
    task: () => {
      started = true
      return new Promise<T>((resolve) => (release = () => resolve(value)))
    },
    release: () => release(),
    started: () => started,
  }
}

describe('ConcurrencyLimiter', () => {
  it('starts a task at once while a slot is free, and queues the rest in arrival order', async () => {
    const limiter = new ConcurrencyLimiter(2)
    const gates = Array.from({ length: 5 }, (_, i) => gate(i))
    const results = gates.map((g) => limiter.schedule(g.task))
    // No timer or tick in between: the first two run as soon as they are scheduled.
    expect(gates.map((g) => g.started())).toEqual([true, true, false, false, false])
    expect(limiter.counts()).toEqual({ queued: 3, running: 2 })

    gates[1]!.release()
    await results[1]
    expect(gates.map((g) => g.started())).toEqual([true, true, true, false, false])
    gates[0]!.release()
    await results[0]
    expect(gates.map((g) => g.started())).toEqual([true, true, true, true, false])
    gates[2]!.release()
    gates[3]!.release()
    await Promise.all([results[2], results[3]])
    expect(gates[4]!.started()).toBe(true)
    gates[4]!.release()
    expect(await Promise.all(results)).toEqual([0, 1, 2, 3, 4])
    expect(limiter.counts()).toEqual({ queued: 0, running: 0 })
  })

  it('gives the slot back when a task rejects or throws synchronously', async () => {
    const limiter = new ConcurrencyLimiter(1)
    await expect(limiter.schedule(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    await expect(
      limiter.schedule(() => {
        throw new Error('sync boom')
      }),
    ).rejects.toThrow('sync boom')
    expect(limiter.counts()).toEqual({ queued: 0, running: 0 })
    await expect(limiter.schedule(async () => 'next')).resolves.toBe('next')
  })

  it('passes a queued task its own outcome, including a rejection', async () => {
    const limiter = new ConcurrencyLimiter(1)
    const first = gate('first')
    const running = limiter.schedule(first.task)
    const failing = limiter.schedule(() => Promise.reject(new Error('queued failure')))
    const succeeding = limiter.schedule(async () => 'queued success')
    first.release()
    await expect(running).resolves.toBe('first')
    await expect(failing).rejects.toThrow('queued failure')
    await expect(succeeding).resolves.toBe('queued success')
  })

  it('has no bound when maxConcurrent is null', () => {
    const limiter = new ConcurrencyLimiter(null)
    const gates = Array.from({ length: 100 }, () => gate(0))
    for (const g of gates) void limiter.schedule(g.task)
    expect(limiter.counts()).toEqual({ queued: 0, running: 100 })
    for (const g of gates) g.release()
  })

  it('stop rejects waiting tasks, waits for running ones, and refuses new ones', async () => {
    const limiter = new ConcurrencyLimiter(1)
    const first = gate('done')
    const running = limiter.schedule(first.task)
    let waitingStarted = false
    const waiting = limiter.schedule(async () => {
      waitingStarted = true
    })
    let stopped = false
    const stopping = limiter.stop('closed before start').then(() => (stopped = true))
    const err = await waiting.catch((e: unknown) => e)
    expect(err).toBeInstanceOf(LimiterStoppedError)
    expect(err).toMatchObject({
      code: 'HTTP_LIMITER_STOPPED',
      retriable: false,
      message: 'closed before start',
    })
    await expect(limiter.schedule(async () => 'late')).rejects.toThrow(/stopped/)
    expect(stopped).toBe(false)
    first.release()
    await expect(running).resolves.toBe('done')
    await stopping
    expect(stopped).toBe(true)
    expect(waitingStarted).toBe(false)
  })

  it('keeps FIFO order across a long queue (the storage compacts without losing entries)', async () => {
    const limiter = new ConcurrencyLimiter(1)
    const order: number[] = []
    const first = gate(-1)
    const head = limiter.schedule(first.task)
    const rest = Array.from({ length: 5_000 }, (_, i) =>
      limiter.schedule(async () => {
        order.push(i)
      }),
    )
    first.release()
    await head
    await Promise.all(rest)
    expect(order).toEqual(Array.from({ length: 5_000 }, (_, i) => i))
  })
})
