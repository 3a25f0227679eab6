import { describe, expect, it } from 'vitest'
import type { LedgerEntry } from './backfill-topics.ts'
import { lastRowOffsets, resumeOffset } from './ledger-summary.ts'

const entry = (row: string): LedgerEntry => ({ row, outcome: 'MATCHED', transactionId: `t-${row}` })

describe('lastRowOffsets', () => {
  it('gives the highest offset per partition of topic rows, in any order, and ignores file lines', () => {
    const ledger = ['0:12', '1:40', '0:7', '0:13', '17', '1:39'].map(entry)
    expect(lastRowOffsets(ledger)).toEqual(new Map([[0, 13n], [1, 40n]]))
  })

  it('is empty for an empty ledger', () => {
    expect(lastRowOffsets([])).toEqual(new Map())
  })
})

describe('resumeOffset', () => {
  it('starts a partition without ledger rows at its range start', () => {
    expect(resumeOffset(100n, undefined)).toBe(100n)
  })

  it('reads on after the last row the ledger holds', () => {
    expect(resumeOffset(100n, 150n)).toBe(151n)
  })

  it('never starts before the range, whatever the ledger holds', () => {
    expect(resumeOffset(100n, 20n)).toBe(100n)
  })
})
