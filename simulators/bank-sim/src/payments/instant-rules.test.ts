import { describe, expect, it } from 'vitest'
import { instantPaymentErrors, type InstantInput } from './instant-rules.ts'

const base: InstantInput = {
  kind: 'DOMESTIC',
  amountMinor: 400_000 * 100,
  currency: 'CZK',
  debtorCurrency: 'CZK',
  today: '2026-11-22',
  creditor: { czech: { bankCode: '0800', prefix: '', number: '2000145399' }, country: 'CZ' },
}

const reasons = (input: InstantInput) => instantPaymentErrors(input).map((e) => e.parameters?.REASON)

describe('instant payment rules', () => {
  it('accepts exactly 400000 CZK from a CZK account today to a participating bank', () => {
    expect(instantPaymentErrors(base)).toEqual([])
    expect(instantPaymentErrors({ ...base, requestedExecutionDate: '2026-11-22', kind: 'INTERNAL' })).toEqual([])
  })

  it('refuses one haler more than 400000 CZK', () => {
    expect(reasons({ ...base, amountMinor: 400_000 * 100 + 1 })).toEqual(['AMOUNT_ABOVE_LIMIT'])
  })

  it('refuses a foreign-currency source account, a future date, a non-participating bank and non-domestic kinds, all at once', () => {
    const all = instantPaymentErrors({
      ...base,
      kind: 'SEPA',
      currency: 'EUR',
      amountMinor: 100,
      debtorCurrency: 'EUR',
      requestedExecutionDate: '2026-11-23',
      creditor: { czech: { bankCode: '2060', prefix: '', number: '1' }, country: 'CZ' },
    })
    expect(all.map((e) => e.error)).toEqual(['NO_PART', 'NO_PART', 'NO_PART', 'NO_PART', 'NO_PART'])
    expect(all.map((e) => e.parameters?.REASON)).toEqual(['NOT_DOMESTIC', 'AMOUNT_ABOVE_LIMIT', 'DEBTOR_CURRENCY_NOT_CZK', 'FUTURE_DATED', 'CREDITOR_BANK_NOT_REACHABLE'])
  })
})
