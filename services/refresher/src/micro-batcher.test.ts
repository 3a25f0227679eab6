import { describe, expect, it } from 'vitest'
import { MicroBatcher } from './micro-batcher.ts'

describe('MicroBatcher', () => {
  it('runs everything submitted in one turn as one batch and hands each submitter its outputs', async () => {
    const batches: number[][] = []
    const batcher = new MicroBatcher<number, string>(async (inputs) => {
      batches.push(inputs)
      return inputs.map((i) => [`out-${i}`])
    })
    // Submitters that await something first (a decode) still land in the same batch.
    const results = await Promise.all([1, 2, 3].map(async (i) => batcher.submit(await Promise.resolve(i))))
    expect(batches).toEqual([[1, 2, 3]])
    expect(results).toEqual([['out-1'], ['out-2'], ['out-3']])
    expect(await batcher.submit(4)).toEqual(['out-4'])
    expect(batches).toEqual([[1, 2, 3], [4]])
  })

  it('fails every submitter of a failed batch', async () => {
    const batcher = new MicroBatcher<number, string>(async () => {
      throw new Error('api down')
    })
    const settled = await Promise.allSettled([batcher.submit(1), batcher.submit(2)])
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected'])
  })
})
