import { afterEach, describe, expect, it, vi } from 'vitest'
import { MicroBatcher } from './micro-batcher.ts'

afterEach(() => {
  vi.useRealTimers()
})

describe('MicroBatcher', () => {
  it('sends a batch as soon as it is full, without waiting for the linger', async () => {
    const calls: number[][] = []
    const batcher = new MicroBatcher<number, number>({
      maxBatchSize: 3,
      lingerMs: 60_000,
      execute: async (inputs) => {
        calls.push([...inputs])
        return inputs.map((i) => i * 10)
      },
    })
    const results = await Promise.all([1, 2, 3].map((i) => batcher.load(i)))
    expect(results).toEqual([10, 20, 30])
    expect(calls).toEqual([[1, 2, 3]])
  })

  it('sends a partly filled batch at the end of the turn while no call is in flight, not after the linger', async () => {
    vi.useFakeTimers()
    const calls: number[][] = []
    const batcher = new MicroBatcher<number, number>({
      maxBatchSize: 500,
      lingerMs: 60_000,
      execute: async (inputs) => {
        calls.push([...inputs])
        return [...inputs]
      },
    })
    // Entries of one turn (the records of one fetch answer) go together.
    const a = batcher.load(1)
    const b = batcher.load(2)
    expect(calls).toEqual([])
    await vi.advanceTimersByTimeAsync(0)
    expect(calls).toEqual([[1, 2]])
    await expect(Promise.all([a, b])).resolves.toEqual([1, 2])
  })

  it('lingers for more entries while a call is in flight', async () => {
    vi.useFakeTimers()
    const calls: number[][] = []
    const held: Array<() => void> = []
    const batcher = new MicroBatcher<number, number>({
      maxBatchSize: 500,
      lingerMs: 5,
      execute: async (inputs) => {
        calls.push([...inputs])
        await new Promise<void>((resolve) => held.push(resolve))
        return [...inputs]
      },
    })
    const a = batcher.load(1)
    await vi.advanceTimersByTimeAsync(0)
    expect(calls).toEqual([[1]])
    // A call is in flight: the next entries wait for the linger.
    const b = batcher.load(2)
    const c = batcher.load(3)
    await vi.advanceTimersByTimeAsync(4)
    expect(calls).toEqual([[1]])
    await vi.advanceTimersByTimeAsync(1)
    expect(calls).toEqual([[1], [2, 3]])
    for (const release of held) release()
    await expect(Promise.all([a, b, c])).resolves.toEqual([1, 2, 3])
  })

  it('fails only the entries the batch function answered with an Error', async () => {
    const batcher = new MicroBatcher<number, number>({
      maxBatchSize: 3,
      lingerMs: 1,
      execute: async (inputs) => inputs.map((i) => (i === 2 ? new Error('entry 2 failed') : i)),
    })
    const settled = await Promise.allSettled([1, 2, 3].map((i) => batcher.load(i)))
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((settled[1] as PromiseRejectedResult).reason.message).toBe('entry 2 failed')
  })

  it('fails every entry of a batch whose call throws, and of one answered with the wrong length', async () => {
    let wrongLength = false
    const batcher = new MicroBatcher<number, number>({
      maxBatchSize: 2,
      lingerMs: 1,
      execute: async (inputs) => {
        if (wrongLength) return [1]
        throw new Error(`outage for ${inputs.length}`)
      },
    })
    await expect(Promise.all([batcher.load(1), batcher.load(2)])).rejects.toThrow('outage for 2')
    wrongLength = true
    const settled = await Promise.allSettled([batcher.load(1), batcher.load(2)])
    for (const s of settled)
      expect((s as PromiseRejectedResult).reason.message).toMatch(/1 results for 2 inputs/)
  })

  it('splits a burst larger than the batch size into full batches', async () => {
    const sizes: number[] = []
    const batcher = new MicroBatcher<number, number>({
      maxBatchSize: 500,
      lingerMs: 1,
      execute: async (inputs) => {
        sizes.push(inputs.length)
        return [...inputs]
      },
    })
    const all = await Promise.all(Array.from({ length: 1_201 }, (_, i) => batcher.load(i)))
    expect(all[1_200]).toBe(1_200)
    expect(sizes).toEqual([500, 500, 201])
  })
})
