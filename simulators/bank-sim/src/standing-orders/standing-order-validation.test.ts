import { describe, expect, it } from 'vitest'
import { readSchedule } from './standing-order-validation.ts'

const valid = {
  requestedExecutionDate: '2026-12-01',
  standingOrder: { execution: { interval: 'MONTHLY', mode: 'UNTIL_CANCELLATION', modeDue: 'DUE_DAY_OF_MONTH' } },
}

const codes = (body: unknown) => readSchedule(body).errors.map((e) => `${e.error}@${e.scope}`)

describe('standing order parameter rules', () => {
  it('accepts the supported intervals and modes and ignores the unprocessed fields', () => {
    for (const interval of ['WEEKLY', 'MONTHLY', 'QUARTERLY', 'HALFYEARLY', 'YEARLY']) {
      expect(readSchedule({ ...valid, standingOrder: { execution: { interval, mode: 'UNTIL_CANCELLATION' } } }).errors).toEqual([])
    }
    const withExtras = readSchedule({
      ...valid,
      standingOrder: {
        alias: 'rent',
        execution: { interval: 'MONTHLY', intervalDue: '5', mode: 'UNTIL_CANCELLATION' },
        exceptions: { breaks: [{ validFromDate: '2027-01-01', validToDate: '2027-02-01' }], stoppages: ['JULY'] },
        validity: { maxAmount: { value: 1, currency: 'CZK' }, maxIterations: 3 },
      },
    })
    expect(withExtras.errors).toEqual([])
    expect(withExtras.schedule).toEqual({ firstDate: '2026-12-01', interval: 'MONTHLY', mode: 'UNTIL_CANCELLATION' })
    expect(withExtras.ignored).toHaveLength(6)
  })

  it('refuses intervals, modes and modeDue values the bank does not support', () => {
    expect(codes({ ...valid, standingOrder: { execution: { interval: 'DAILY', mode: 'UNTIL_CANCELLATION' } } })).toEqual(['FIELD_INVALID@standingOrder.execution.interval'])
    expect(codes({ ...valid, standingOrder: { execution: { interval: 'MONTHLY', mode: 'AFTER_MAX_ITERATION_EXCEEDED' } } })).toEqual(['FIELD_INVALID@standingOrder.execution.mode'])
    expect(codes({ ...valid, standingOrder: { execution: { interval: 'MONTHLY', mode: 'UNTIL_CANCELLATION', modeDue: 'DUE_LAST_DAY_OF_MONTH' } } })).toEqual(['FIELD_INVALID@standingOrder.execution.modeDue'])
  })

  it('allows lastExecutionDate only with UNTIL_DATE and requires it there', () => {
    expect(codes({ ...valid, standingOrder: { execution: { interval: 'MONTHLY', mode: 'UNTIL_CANCELLATION' }, validity: { lastExecutionDate: '2027-12-01' } } })).toEqual([
      'FIELD_INVALID@standingOrder.validity.lastExecutionDate',
    ])
    expect(codes({ ...valid, standingOrder: { execution: { interval: 'MONTHLY', mode: 'UNTIL_DATE' } } })).toEqual(['FIELD_MISSING@standingOrder.validity.lastExecutionDate'])
    expect(codes({ ...valid, standingOrder: { execution: { interval: 'MONTHLY', mode: 'UNTIL_DATE' }, validity: { lastExecutionDate: '2026-11-30' } } })).toEqual(['DT01@standingOrder.validity.lastExecutionDate'])
    expect(readSchedule({ ...valid, standingOrder: { execution: { interval: 'MONTHLY', mode: 'UNTIL_DATE' }, validity: { lastExecutionDate: '2027-12-01' } } }).schedule).toEqual({
      firstDate: '2026-12-01',
      interval: 'MONTHLY',
      mode: 'UNTIL_DATE',
      lastExecutionDate: '2027-12-01',
    })
  })

  it('requires the first execution date and the execution block', () => {
    expect(codes({ standingOrder: {} })).toEqual([
      'FIELD_MISSING@requestedExecutionDate',
      'FIELD_MISSING@standingOrder.execution',
      'FIELD_MISSING@standingOrder.execution.interval',
      'FIELD_MISSING@standingOrder.execution.mode',
    ])
  })
})
