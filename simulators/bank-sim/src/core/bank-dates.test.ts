import { describe, expect, it } from 'vitest'
import { addMonthsClamped, bankDate, bankInstant, isIsoDate } from './bank-dates.ts'

describe('bank dates (Europe/Prague)', () => {
  it('maps instants to the Prague date around midnight in winter and summer', () => {
    expect(bankDate(Date.parse('2026-01-14T22:59:59Z'))).toBe('2026-01-14')
    expect(bankDate(Date.parse('2026-01-14T23:00:00Z'))).toBe('2026-01-15')
    expect(bankDate(Date.parse('2026-07-14T21:59:59Z'))).toBe('2026-07-14')
    expect(bankDate(Date.parse('2026-07-14T22:00:00Z'))).toBe('2026-07-15')
  })

  it('gives local wall-clock instants, also on the days the clocks change', () => {
    expect(new Date(bankInstant('2026-01-15', 0)).toISOString()).toBe('2026-01-14T23:00:00.000Z')
    expect(new Date(bankInstant('2026-07-15', 6 * 60)).toISOString()).toBe('2026-07-15T04:00:00.000Z')
    // 29 March 2026: 02:00 CET becomes 03:00 CEST.
    expect(new Date(bankInstant('2026-03-29', 0)).toISOString()).toBe('2026-03-28T23:00:00.000Z')
    expect(new Date(bankInstant('2026-03-29', 5 * 60)).toISOString()).toBe('2026-03-29T03:00:00.000Z')
    // 25 October 2026: 03:00 CEST becomes 02:00 CET.
    expect(new Date(bankInstant('2026-10-25', 0)).toISOString()).toBe('2026-10-24T22:00:00.000Z')
    expect(new Date(bankInstant('2026-10-25', 12 * 60)).toISOString()).toBe('2026-10-25T11:00:00.000Z')
  })

  it('validates ISO dates and clamps month arithmetic to the month end', () => {
    expect(isIsoDate('2026-02-29')).toBe(false)
    expect(isIsoDate('2028-02-29')).toBe(true)
    expect(addMonthsClamped('2026-01-31', 1, 31)).toBe('2026-02-28')
    expect(addMonthsClamped('2026-01-31', 2, 31)).toBe('2026-03-31')
  })
})
