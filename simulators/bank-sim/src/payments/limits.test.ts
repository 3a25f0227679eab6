import { describe, expect, it } from 'vitest'
import { DEFAULT_PAYMENT_LIMITS, exceededLimit } from './limits.ts'

describe('payment limits', () => {
  it('allows the daily limit exactly and refuses one minor unit more, counting only the same day', () => {
    const existing = [
      { executionDate: '2026-11-22', amountMinor: 300_000_00 },
      { executionDate: '2026-11-21', amountMinor: 450_000_00 },
    ]
    expect(exceededLimit(DEFAULT_PAYMENT_LIMITS, 'CZK', existing, { executionDate: '2026-11-22', amountMinor: 200_000_00 })).toBeUndefined()
    expect(exceededLimit(DEFAULT_PAYMENT_LIMITS, 'CZK', existing, { executionDate: '2026-11-22', amountMinor: 200_000_01 })).toEqual({ limit: 'DAILY', remainingMinor: 200_000_00 })
  })

  it('sums the calendar month for the monthly limit', () => {
    const existing = [1, 2, 3, 4].map((d) => ({ executionDate: `2026-11-0${d}`, amountMinor: 490_000_00 }))
    expect(exceededLimit(DEFAULT_PAYMENT_LIMITS, 'CZK', existing, { executionDate: '2026-11-30', amountMinor: 40_000_00 })).toBeUndefined()
    expect(exceededLimit(DEFAULT_PAYMENT_LIMITS, 'CZK', existing, { executionDate: '2026-11-30', amountMinor: 40_000_01 })).toEqual({ limit: 'MONTHLY', remainingMinor: 40_000_00 })
    expect(exceededLimit(DEFAULT_PAYMENT_LIMITS, 'CZK', existing, { executionDate: '2026-12-01', amountMinor: 400_000_00 })).toBeUndefined()
  })
})
