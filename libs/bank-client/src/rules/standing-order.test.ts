import { describe, expect, it } from 'vitest'
import { StandingOrderRuleError } from '../errors.ts'
import type { StandingOrderRequest } from '../model/standing-orders.ts'
import { IBAN } from './fixtures.test-support.ts'
import { prepareStandingOrder } from './standing-order.ts'

function order(
  so: Partial<StandingOrderRequest['standingOrder']> = {},
  rest: Partial<StandingOrderRequest> = {},
): StandingOrderRequest {
  return {
    standingOrderIdentification: { instructionIdentification: 'so-1' },
    amount: { instructedAmount: { value: '250.00', currency: 'CZK' } },
    requestedExecutionDate: '2026-04-15',
    standingOrder: {
      execution: { interval: 'MONTHLY', mode: 'UNTIL_CANCELLATION', modeDue: 'DUE_DAY_OF_MONTH' },
      ...so,
    },
    debtorAccount: { identification: { iban: IBAN.rbOther } },
    creditorAccount: { identification: { iban: IBAN.cs } },
    ...rest,
  }
}

function rulesOf(fn: () => unknown): string[] {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(StandingOrderRuleError)
    return (err as StandingOrderRuleError).violations.map((v) => `${v.rule}@${v.field}`)
  }
  throw new Error('expected StandingOrderRuleError')
}

describe('prepareStandingOrder', () => {
  it('passes a supported order through unchanged and without warnings', () => {
    const o = order()
    expect(prepareStandingOrder(o)).toEqual({ body: o, warnings: [] })
  })

  it.each(['WEEKLY', 'MONTHLY', 'QUARTERLY', 'HALFYEARLY', 'YEARLY'])('accepts interval %s', (interval) => {
    expect(() =>
      prepareStandingOrder(order({ execution: { interval, mode: 'UNTIL_CANCELLATION' } })),
    ).not.toThrow()
  })

  it.each(['DAILY', 'BI_MONTHLY', 'IRREGULAR'])('refuses interval %s', (interval) => {
    expect(
      rulesOf(() => prepareStandingOrder(order({ execution: { interval, mode: 'UNTIL_CANCELLATION' } }))),
    ).toEqual(['SO_INTERVAL@standingOrder.execution.interval'])
  })

  it('refuses unsupported modes and modeDue values', () => {
    expect(
      rulesOf(() =>
        prepareStandingOrder(
          order({
            execution: {
              interval: 'MONTHLY',
              mode: 'AFTER_MAX_ITERATION_EXCEEDED',
              modeDue: 'DUE_LAST_DAY_OF_MONTH',
            },
          }),
        ),
      ),
    ).toEqual(['SO_MODE@standingOrder.execution.mode', 'SO_MODE_DUE@standingOrder.execution.modeDue'])
  })

  it('requires lastExecutionDate with UNTIL_DATE and allows it only there', () => {
    expect(
      rulesOf(() => prepareStandingOrder(order({ execution: { interval: 'MONTHLY', mode: 'UNTIL_DATE' } }))),
    ).toEqual(['SO_LAST_EXECUTION@standingOrder.validity.lastExecutionDate'])
    expect(
      rulesOf(() => prepareStandingOrder(order({ validity: { lastExecutionDate: '2026-12-31' } }))),
    ).toEqual(['SO_LAST_EXECUTION@standingOrder.validity.lastExecutionDate'])
    const ok = order({
      execution: { interval: 'YEARLY', mode: 'UNTIL_DATE' },
      validity: { lastExecutionDate: '2030-04-15' },
    })
    expect(prepareStandingOrder(ok).body.standingOrder.validity).toEqual({ lastExecutionDate: '2030-04-15' })
  })

  it('refuses a last execution before the first, bad dates and non-CZK orders', () => {
    const early = order({
      execution: { interval: 'YEARLY', mode: 'UNTIL_DATE' },
      validity: { lastExecutionDate: '2026-01-01' },
    })
    expect(rulesOf(() => prepareStandingOrder(early))).toEqual([
      'SO_LAST_EXECUTION@standingOrder.validity.lastExecutionDate',
    ])
    expect(rulesOf(() => prepareStandingOrder(order({}, { requestedExecutionDate: '2026-02-30' })))).toEqual([
      'SO_DATE@requestedExecutionDate',
    ])
    expect(
      rulesOf(() =>
        prepareStandingOrder(order({}, { amount: { instructedAmount: { value: '1', currency: 'EUR' } } })),
      ),
    ).toEqual(['SO_CURRENCY@amount.instructedAmount.currency'])
  })

  it('drops every unprocessed field with one warning each by default, without touching the input', () => {
    const o = order({
      alias: 'rent',
      execution: { interval: 'MONTHLY', intervalDue: 15, mode: 'UNTIL_DATE' },
      exceptions: { breaks: [{ validFromDate: '2026-07-01', validToDate: '2026-08-31' }], stoppages: [7, 8] },
      validity: {
        lastExecutionDate: '2027-04-15',
        maxAmount: { value: '1000', currency: 'CZK' },
        maxIterations: 12,
      },
    })
    const snapshot = structuredClone(o)
    const { body, warnings } = prepareStandingOrder(o)
    expect(warnings.map((w) => w.field)).toEqual([
      'standingOrder.alias',
      'standingOrder.exceptions.breaks',
      'standingOrder.exceptions.stoppages',
      'standingOrder.execution.intervalDue',
      'standingOrder.validity.maxAmount',
      'standingOrder.validity.maxIterations',
    ])
    expect(body.standingOrder).toEqual({
      execution: { interval: 'MONTHLY', mode: 'UNTIL_DATE' },
      validity: { lastExecutionDate: '2027-04-15' },
    })
    expect(o).toEqual(snapshot)
  })

  it('refuses unprocessed fields when the policy says so, including the v8 spelling "stopages"', () => {
    const o = order({ alias: 'rent', exceptions: { stopages: [1] } })
    expect(rulesOf(() => prepareStandingOrder(o, 'refuse'))).toEqual([
      'SO_UNPROCESSED_FIELD@standingOrder.alias',
      'SO_UNPROCESSED_FIELD@standingOrder.exceptions.stopages',
    ])
  })
})
