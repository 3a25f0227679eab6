import type { EnrichmentStatus } from '@tep/schemas'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { OutcomeTracker } from './outcome-tracker.ts'

describe('OutcomeTracker (results counted once their transaction committed)', () => {
  it('counts each noted result once, by status and fetched snapshots, when a commit covers its offset', () => {
    const noted = fc.array(
      fc.record({
        partition: fc.nat({ max: 3 }),
        offset: fc.nat({ max: 5_000 }),
        status: fc.constantFrom<EnrichmentStatus>('MATCHED', 'NOT_FOUND', 'REJECTED'),
        shops: fc.nat({ max: 3 }),
        merchants: fc.nat({ max: 3 }),
      }),
      { maxLength: 200 },
    )
    fc.assert(
      fc.property(noted, fc.array(fc.tuple(fc.nat({ max: 3 }), fc.nat({ max: 5_000 })), { maxLength: 10 }), (results, commits) => {
        const tracker = new OutcomeTracker()
        // The last note of an offset wins (a redo after an aborted transaction notes it again).
        const expected = new Map<string, (typeof results)[number]>()
        for (const r of results) {
          tracker.note('raw', r.partition, String(r.offset), r.status, r.shops, r.merchants)
          expected.set(`${r.partition}:${r.offset}`, r)
        }
        for (const [partition, last] of [...commits, [0, 5_000], [1, 5_000], [2, 5_000], [3, 5_000]] as const) {
          const counts = tracker.committed('raw', partition, String(last))
          const covered = [...expected.values()].filter((r) => r.partition === partition && r.offset <= last)
          for (const r of covered) expected.delete(`${r.partition}:${r.offset}`)
          const byStatus = new Map<EnrichmentStatus, number>()
          for (const r of covered) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1)
          expect(counts.byStatus).toEqual(byStatus)
          expect(counts.fetchedShops).toBe(covered.reduce((n, r) => n + r.shops, 0))
          expect(counts.fetchedMerchants).toBe(covered.reduce((n, r) => n + r.merchants, 0))
        }
      }),
    )
  })

  it('keeps topics and partitions apart, and forgets partitions no longer owned', () => {
    const tracker = new OutcomeTracker()
    tracker.note('a', 0, '7', 'MATCHED', 1, 1)
    tracker.note('b', 0, '7', 'REJECTED', 0, 0)
    tracker.note('a', 1, '7', 'NOT_FOUND', 0, 0)
    tracker.retain([{ topic: 'a', partition: 0 }, { topic: 'b', partition: 0 }])
    expect(tracker.committed('a', 1, '100').byStatus.size).toBe(0)
    expect([...tracker.committed('b', 0, '100').byStatus]).toEqual([['REJECTED', 1]])
    const a = tracker.committed('a', 0, '6')
    expect(a.byStatus.size).toBe(0)
    expect(tracker.committed('a', 0, '7')).toEqual({ byStatus: new Map([['MATCHED', 1]]), fetchedShops: 1, fetchedMerchants: 1 })
    expect(tracker.committed('a', 0, '7').byStatus.size).toBe(0)
  })
})
