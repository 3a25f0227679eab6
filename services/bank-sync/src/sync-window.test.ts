import { describe, expect, it } from 'vitest'
import { addDays, planDateFrom, seenHorizon } from './sync-window.ts'

const base = { today: '2026-05-04', overlapDays: 3, oldestPendingDate: null, backfillDays: 365 }

describe('planDateFrom', () => {
  it('backfills beyond 90 days only on the first sync with a fresh token', () => {
    expect(planDateFrom({ ...base, lastBookingDate: null, freshToken: true })).toEqual({
      dateFrom: '2025-05-04',
      needsFreshToken: true,
      clamped: false,
    })
    expect(planDateFrom({ ...base, lastBookingDate: null, freshToken: false }).dateFrom).toBe(
      addDays('2026-05-04', -89),
    )
  })

  it('a short backfill needs no fresh token', () => {
    expect(planDateFrom({ ...base, backfillDays: 30, lastBookingDate: null, freshToken: true })).toEqual({
      dateFrom: '2026-04-04',
      needsFreshToken: false,
      clamped: false,
    })
  })

  it('later syncs read from the watermark minus the overlap, whatever the token', () => {
    expect(planDateFrom({ ...base, lastBookingDate: '2026-05-03', freshToken: true }).dateFrom).toBe(
      '2026-04-30',
    )
  })

  it('reaches back to the oldest pending entry so its booking is seen', () => {
    expect(
      planDateFrom({
        ...base,
        lastBookingDate: '2026-05-03',
        oldestPendingDate: '2026-04-20',
        freshToken: false,
      }).dateFrom,
    ).toBe('2026-04-20')
  })

  it('never asks for more than 89 days without a fresh token', () => {
    expect(planDateFrom({ ...base, lastBookingDate: '2026-01-01', freshToken: false })).toEqual({
      dateFrom: addDays('2026-05-04', -89),
      needsFreshToken: false,
      clamped: true,
    })
  })
})

describe('seenHorizon', () => {
  it('keeps what the next sync can re-read, with a day of margin', () => {
    expect(seenHorizon('2026-05-03', 3, '2026-05-04')).toBe('2026-04-29')
    expect(seenHorizon(null, 3, '2026-05-04')).toBe(addDays('2026-05-04', -90))
    expect(seenHorizon('2025-01-01', 3, '2026-05-04')).toBe(addDays('2026-05-04', -90))
  })
})
