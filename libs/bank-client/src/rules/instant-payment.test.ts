import { describe, expect, it } from 'vitest'
import { InstantPaymentRuleError } from '../errors.ts'
import { IBAN, payment } from './fixtures.test-support.ts'
import { assertInstantPaymentAllowed, instantPaymentViolations } from './instant-payment.ts'

// 23:30 UTC on 1 March is already 2 March in Prague (UTC+1 in winter).
const now = new Date('2026-03-01T23:30:00Z')
const inst = { instructionPriority: 'INST' as const }

const rules = (p: Parameters<typeof instantPaymentViolations>[0]) =>
  instantPaymentViolations(p, now).map((v) => v.rule)

describe('instant payment rules', () => {
  it('accepts a domestic CZK payment of exactly 400000.00 dated today in Prague', () => {
    const p = payment({
      paymentTypeInformation: inst,
      amount: { instructedAmount: { value: '400000.00', currency: 'CZK' } },
      requestedExecutionDate: '2026-03-02',
    })
    expect(instantPaymentViolations(p, now)).toEqual([])
    expect(() => assertInstantPaymentAllowed(p, now)).not.toThrow()
  })

  it('refuses 400000.01 CZK (compared in minor units, not floats)', () => {
    const p = payment({
      paymentTypeInformation: inst,
      amount: { instructedAmount: { value: 400000.01, currency: 'CZK' } },
    })
    expect(rules(p)).toEqual(['INSTANT_AMOUNT_LIMIT'])
  })

  it('refuses a non-CZK amount and a non-CZK source bucket', () => {
    expect(
      rules(
        payment({
          paymentTypeInformation: inst,
          debtorAccount: { identification: { iban: IBAN.rbOther }, currency: 'EUR' },
        }),
      ),
    ).toEqual(['INSTANT_SOURCE_CURRENCY'])
    expect(
      rules(
        payment({
          paymentTypeInformation: inst,
          amount: { instructedAmount: { value: '5', currency: 'EUR' } },
        }),
      ),
    ).toEqual(['INSTANT_CURRENCY', 'INSTANT_DOMESTIC_ONLY'])
  })

  it('refuses a future date by the Prague calendar', () => {
    expect(rules(payment({ paymentTypeInformation: inst, requestedExecutionDate: '2026-03-03' }))).toEqual([
      'INSTANT_FUTURE_DATED',
    ])
    expect(rules(payment({ paymentTypeInformation: inst, requestedExecutionDate: '2026-03-01' }))).toEqual([])
  })

  it('refuses a foreign creditor', () => {
    expect(
      rules(
        payment({ paymentTypeInformation: inst, creditorAccount: { identification: { iban: IBAN.de } } }),
      ),
    ).toEqual(['INSTANT_DOMESTIC_ONLY'])
  })

  it('throws one typed error listing every violation, and ignores non-INST payments', () => {
    const p = payment({
      paymentTypeInformation: inst,
      amount: { instructedAmount: { value: '500000', currency: 'CZK' } },
      requestedExecutionDate: '2027-01-01',
      debtorAccount: { identification: { iban: IBAN.rbOther }, currency: 'USD' },
    })
    try {
      assertInstantPaymentAllowed(p, now)
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(InstantPaymentRuleError)
      const e = err as InstantPaymentRuleError
      expect(e.code).toBe('INSTANT_PAYMENT_NOT_ALLOWED')
      expect(e.violations.map((v) => v.rule)).toEqual([
        'INSTANT_AMOUNT_LIMIT',
        'INSTANT_SOURCE_CURRENCY',
        'INSTANT_FUTURE_DATED',
      ])
      expect(e.message).toMatch(/limited to 400000.00 CZK/)
    }
    expect(() =>
      assertInstantPaymentAllowed({ ...p, paymentTypeInformation: { instructionPriority: 'HIGH' } }, now),
    ).not.toThrow()
  })
})
