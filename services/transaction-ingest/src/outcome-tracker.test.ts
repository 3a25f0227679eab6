import { describe, expect, it } from 'vitest'
import { OutcomeTracker } from './outcome-tracker.ts'

const matched = (fetchedShops = 0, fetchedMerchants = 0) => ({ status: 'MATCHED' as const, fetchedShops, fetchedMerchants })

describe('OutcomeTracker', () => {
  it('counts what a commit covers, once, by status and fetched entity, and forgets it', () => {
    const t = new OutcomeTracker()
    t.note('raw', 0, '10', matched(1, 1))
    t.note('raw', 1, '10', { status: 'REJECTED', fetchedShops: 0, fetchedMerchants: 0 })
    t.note('raw', 0, '11', { status: 'NOT_FOUND', fetchedShops: 0, fetchedMerchants: 0 })
    t.note('raw', 0, '12', matched(3000, 4095))
    // A batch aborted and redone notes its records again: counted once, as last noted.
    t.note('raw', 0, '11', matched())
    t.note('raw', 0, '13', matched())
    const first = t.committed('raw', 0, '12')
    expect(first.byStatus).toEqual(new Map([['MATCHED', 3]]))
    expect(first.fetchedShops).toBe(3001)
    expect(first.fetchedMerchants).toBe(4096)
    // Nothing twice; the rest and the other partition when their commits come.
    expect(t.committed('raw', 0, '12').byStatus.size).toBe(0)
    expect(t.committed('raw', 0, '13').byStatus).toEqual(new Map([['MATCHED', 1]]))
    expect(t.committed('raw', 1, '10').byStatus).toEqual(new Map([['REJECTED', 1]]))
    expect(t.committed('other', 0, '99').byStatus.size).toBe(0)
  })

  it('forgets the partitions it no longer owns', () => {
    const t = new OutcomeTracker()
    t.note('raw', 0, '5', matched())
    t.note('raw', 1, '5', matched())
    t.retain([{ topic: 'raw', partition: 1 }])
    expect(t.committed('raw', 0, '5').byStatus.size).toBe(0)
    // Noted again after the partition came back: counted.
    t.note('raw', 0, '6', matched())
    expect(t.committed('raw', 0, '6').byStatus).toEqual(new Map([['MATCHED', 1]]))
    expect(t.committed('raw', 1, '5').byStatus).toEqual(new Map([['MATCHED', 1]]))
  })

  it('refuses a result it cannot hold', () => {
    expect(() => new OutcomeTracker().note('raw', 0, '1', matched(4096))).toThrow(RangeError)
  })
})
