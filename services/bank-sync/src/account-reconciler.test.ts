import type { Transaction } from '@tep/bank-client'
import { describe, expect, it } from 'vitest'
import { emptyAccountState, reconcileAccount } from './account-reconciler.ts'

function tx(ref: string, date: string, status: 'BOOK' | 'PDNG' = 'BOOK', amount = 100): Transaction {
  return {
    entryReference: ref,
    amount: { value: amount, currency: 'CZK' },
    creditDebitIndicator: 'DBIT',
    status,
    bookingDate: { date },
  }
}

const opts = { today: '2026-05-04', now: 1 }

describe('reconcileAccount', () => {
  it('adds every new entry once, oldest first, and moves the watermark to the newest booking', () => {
    const r = reconcileAccount(
      emptyAccountState('a', 'CZK', 3),
      [tx('C', '2026-05-03'), tx('B', '2026-05-02'), tx('A', '2026-05-01')],
      opts,
    )
    expect(r.changes.map((c) => [c.entry.entryReference, c.changeType, c.emitRaw])).toEqual([
      ['A', 'ADDED', true],
      ['B', 'ADDED', true],
      ['C', 'ADDED', true],
    ])
    expect(r.state.lastBookingDate).toBe('2026-05-03')
    expect(r.state.lastSyncedAt).toBe(1)
  })

  it('emits nothing for entries already seen in the overlap window', () => {
    const first = reconcileAccount(
      emptyAccountState('a', 'CZK', 3),
      [tx('B', '2026-05-02'), tx('A', '2026-05-01')],
      opts,
    )
    const second = reconcileAccount(
      first.state,
      [tx('C', '2026-05-04'), tx('B', '2026-05-02'), tx('A', '2026-05-01')],
      opts,
    )
    expect(second.changes.map((c) => c.entry.entryReference)).toEqual(['C'])
  })

  it('a pending entry that books is ONE MODIFIED and no second raw event', () => {
    const first = reconcileAccount(emptyAccountState('a', 'CZK', 3), [tx('H', '2026-05-03', 'PDNG')], opts)
    expect(first.changes).toMatchObject([{ changeType: 'ADDED', emitRaw: true }])
    expect(first.state.pendingEntryReferences).toEqual(['H'])
    const stillPending = reconcileAccount(first.state, [tx('H', '2026-05-03', 'PDNG')], opts)
    expect(stillPending.changes).toEqual([])
    const booked = reconcileAccount(stillPending.state, [tx('H', '2026-05-05', 'BOOK')], {
      ...opts,
      today: '2026-05-05',
    })
    expect(booked.changes).toMatchObject([{ changeType: 'MODIFIED', emitRaw: false }])
    expect(booked.state.pendingEntryReferences).toEqual([])
    const again = reconcileAccount(booked.state, [tx('H', '2026-05-05', 'BOOK')], {
      ...opts,
      today: '2026-05-05',
    })
    expect(again.changes).toEqual([])
  })

  it('keeps identical twins with different entry references apart', () => {
    const r = reconcileAccount(
      emptyAccountState('a', 'CZK', 3),
      [tx('T1', '2026-05-03'), tx('T2', '2026-05-03')],
      opts,
    )
    expect(r.changes.map((c) => c.entry.entryReference).sort()).toEqual(['T1', 'T2'])
  })

  it('counts an entry read twice (pages shifting) once, the booked copy winning', () => {
    const r = reconcileAccount(
      emptyAccountState('a', 'CZK', 3),
      [tx('X', '2026-05-04', 'BOOK'), tx('X', '2026-05-02', 'PDNG')],
      opts,
    )
    expect(r.changes).toHaveLength(1)
    expect(r.changes[0]?.item.status).toBe('BOOK')
    expect(r.state.pendingEntryReferences).toEqual([])
  })

  it('forgets entries the next sync cannot re-read, but never pending ones', () => {
    const r = reconcileAccount(
      emptyAccountState('a', 'CZK', 3),
      [tx('NEW', '2026-05-04'), tx('HOLD', '2026-04-10', 'PDNG'), tx('OLD', '2026-04-20')],
      opts,
    )
    expect(r.state.seenEntries.map((s) => s.entryReference).sort()).toEqual(['HOLD', 'NEW'])
    expect(r.state.pendingEntryReferences).toEqual(['HOLD'])
  })

  it('drops a hold that never booked after the lapse period', () => {
    const first = reconcileAccount(emptyAccountState('a', 'CZK', 3), [tx('HOLD', '2026-03-01', 'PDNG')], {
      ...opts,
      today: '2026-03-01',
    })
    const later = reconcileAccount(first.state, [], { ...opts, today: '2026-05-04' })
    expect(later.state.pendingEntryReferences).toEqual([])
    // Still remembered while the bank could show it, so it is not published again.
    expect(later.state.seenEntries.map((s) => s.entryReference)).toEqual(['HOLD'])
    expect(
      reconcileAccount(later.state, [tx('HOLD', '2026-03-01', 'PDNG')], { ...opts, today: '2026-05-04' })
        .changes,
    ).toEqual([])
  })

  it('keeps entries without a bank reference apart by occurrence (fallback keys)', () => {
    const a = { ...tx('', '2026-05-03'), entryReference: undefined }
    const r = reconcileAccount(emptyAccountState('a', 'CZK', 3), [a, { ...a }], opts)
    expect(r.changes).toHaveLength(2)
    const again = reconcileAccount(r.state, [a, { ...a }], opts)
    expect(again.changes).toEqual([])
  })
})
