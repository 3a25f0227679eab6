import { describe, expect, it } from 'vitest'
import { MIN_RECORDS_PER_LOADER, planLoaderShares, type PartitionSize } from './loader-shares.ts'

const sizes = (topic: string, records: number[]): PartitionSize[] => records.map((n, partition) => ({ topic, partition, records: n }))
const key = (p: { topic: string; partition: number }): string => `${p.topic}:${p.partition}`

describe('planLoaderShares', () => {
  it('leaves a small table to one loader process', () => {
    expect(planLoaderShares(sizes('shops', [1000, 1000, 1000]), 4)).toBeUndefined()
    expect(planLoaderShares(sizes('shops', [MIN_RECORDS_PER_LOADER, MIN_RECORDS_PER_LOADER - 1]), 4)).toBeUndefined()
  })

  it('uses one process when only one is allowed or only one partition holds records', () => {
    expect(planLoaderShares(sizes('shops', [5_000_000, 5_000_000]), 1)).toBeUndefined()
    expect(planLoaderShares(sizes('shops', [5_000_000, 0, 0]), 4)).toBeUndefined()
  })

  it('puts every partition of both topics into exactly one share, balanced by records', () => {
    const all = [...sizes('shops', [900_000, 850_000, 820_000, 800_000, 780_000, 760_000]), ...sizes('merchants', [90_000, 85_000, 0, 80_000, 78_000, 76_000])]
    const shares = planLoaderShares(all, 2)!
    expect(shares).toHaveLength(2)
    const listed = shares.flat().map(key)
    expect(listed.sort()).toEqual(all.map(key).sort())
    const load = shares.map((share) => share.reduce((n, p) => n + all.find((s) => key(s) === key(p))!.records, 0))
    // Largest first onto the least loaded: the two shares differ by at most the largest partition.
    expect(Math.abs(load[0]! - load[1]!)).toBeLessThanOrEqual(900_000)
    expect(Math.abs(load[0]! - load[1]!)).toBeLessThan(0.05 * (load[0]! + load[1]!))
  })

  it('starts no more processes than the records pay for, nor than there are partitions with records', () => {
    expect(planLoaderShares(sizes('shops', [400_000, 400_000, 0, 0]), 8)).toHaveLength(2)
    expect(planLoaderShares(sizes('shops', [MIN_RECORDS_PER_LOADER * 3, MIN_RECORDS_PER_LOADER * 3, MIN_RECORDS_PER_LOADER * 3]), 8)).toHaveLength(3)
    expect(planLoaderShares(sizes('shops', Array(12).fill(1_000_000)), 4)).toHaveLength(4)
  })
})
