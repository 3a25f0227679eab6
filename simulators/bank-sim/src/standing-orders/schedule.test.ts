import { describe, expect, it } from 'vitest'
import { executionDates, nextExecutionDate } from './schedule.ts'

describe('standing-order schedule', () => {
  it('keeps the due day of month and clamps it to short months', () => {
    expect(executionDates({ firstDate: '2026-01-31', interval: 'MONTHLY', mode: 'UNTIL_CANCELLATION' }, '2026-01-01', '2026-05-31')).toEqual([
      '2026-01-31',
      '2026-02-28',
      '2026-03-31',
      '2026-04-30',
      '2026-05-31',
    ])
  })

  it('steps weeks, quarters, half years and years', () => {
    expect(executionDates({ firstDate: '2026-01-05', interval: 'WEEKLY', mode: 'UNTIL_CANCELLATION' }, '2026-01-10', '2026-01-26')).toEqual(['2026-01-12', '2026-01-19', '2026-01-26'])
    expect(executionDates({ firstDate: '2026-01-15', interval: 'QUARTERLY', mode: 'UNTIL_CANCELLATION' }, '2026-01-01', '2026-12-31')).toEqual(['2026-01-15', '2026-04-15', '2026-07-15', '2026-10-15'])
    expect(executionDates({ firstDate: '2024-02-29', interval: 'YEARLY', mode: 'UNTIL_CANCELLATION' }, '2024-01-01', '2026-12-31')).toEqual(['2024-02-29', '2025-02-28', '2026-02-28'])
    expect(executionDates({ firstDate: '2026-03-01', interval: 'HALFYEARLY', mode: 'UNTIL_CANCELLATION' }, '2026-01-01', '2027-03-01')).toEqual(['2026-03-01', '2026-09-01', '2027-03-01'])
  })

  it('stops at the last execution date in UNTIL_DATE mode', () => {
    const s = { firstDate: '2026-01-10', interval: 'MONTHLY', mode: 'UNTIL_DATE', lastExecutionDate: '2026-03-09' } as const
    expect(executionDates(s, '2026-01-01', '2026-12-31')).toEqual(['2026-01-10', '2026-02-10'])
    expect(nextExecutionDate(s, '2026-02-11')).toBeUndefined()
    expect(nextExecutionDate(s, '2026-01-11')).toBe('2026-02-10')
  })
})
