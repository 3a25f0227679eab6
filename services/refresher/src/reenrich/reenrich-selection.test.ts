import { exampleRawCardTransaction } from '@tep/schemas'
import { describe, expect, it } from 'vitest'
import { addTarget, ReenrichSelector } from './reenrich-selection.ts'

const enriched = (transactionId: string, handle: string | null, enrichedAt: number) => ({
  transactionId,
  handle,
  enrichedAt,
  raw: exampleRawCardTransaction(transactionId),
})

describe('ReenrichSelector', () => {
  it('selects the latest result per transaction when it carries an invalidated handle from before the invalidation', () => {
    const targets = new Map<string, number>()
    addTarget(targets, 'h1', 1000)
    addTarget(targets, 'h1', 500) // older invalidation of the same handle: the latest counts
    addTarget(targets, 'h2', 1000)
    const s = new ReenrichSelector(targets)
    s.offer(enriched('t1', 'h1', 100)) // selected
    s.offer(enriched('t2', 'h2', 100))
    s.offer(enriched('t2', 'h2', 2000)) // re-enriched after the invalidation already
    s.offer(enriched('t3', 'h1', 100))
    s.offer(enriched('t3', 'other', 200)) // now mapped elsewhere
    s.offer(enriched('t4', null, 100))
    s.offer(enriched('t5', 'unrelated', 100))
    const result = s.result()
    expect(result.republish.map((r) => r.transactionId)).toEqual(['t1'])
    expect(result.republish[0]).toEqual({ ...exampleRawCardTransaction('t1'), refresh: true })
    expect(result.alreadyRefreshed).toBe(1)
    expect(result.scanned).toBe(7)
  })

  it('keeps a transaction once even when several of its results match', () => {
    const s = new ReenrichSelector(new Map([['h', 1000]]))
    s.offer(enriched('t1', 'h', 10))
    s.offer(enriched('t1', 'h', 20))
    expect(s.result().republish).toHaveLength(1)
  })
})
