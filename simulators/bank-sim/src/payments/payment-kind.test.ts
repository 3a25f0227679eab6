import { describe, expect, it } from 'vitest'
import { classifyPayment, serviceLevelOf } from './payment-kind.ts'
import { resolveCreditor } from './creditor.ts'
import { czechIban } from '../core/bank-codes.ts'

function creditorOf(input: Parameters<typeof resolveCreditor>[0]) {
  const r = resolveCreditor(input)
  if (!r.creditor) throw new Error(JSON.stringify(r.errors))
  return r.creditor
}

describe('payment kind classification', () => {
  it('treats a creditor at bank 5500 as internal, whatever the currency or the IBAN check digits', () => {
    const iban = czechIban('5500', '', '1019382023')
    expect(classifyPayment({ currency: 'CZK', creditor: creditorOf({ creditorAccount: { identification: { iban } } }) })).toBe('INTERNAL')
    expect(classifyPayment({ currency: 'EUR', creditor: creditorOf({ creditorAccount: { identification: { iban } } }) })).toBe('INTERNAL')
    expect(classifyPayment({ currency: 'CZK', creditor: creditorOf({ creditorAccount: { identification: { other: { identification: '1019382023/5500' } } } }) })).toBe('INTERNAL')
  })

  it('treats CZK to a Czech account at another bank as domestic, by IBAN, national number or agent bank code', () => {
    const byIban = creditorOf({ creditorAccount: { identification: { iban: czechIban('0800', '19', '2000145399') } } })
    expect(classifyPayment({ currency: 'CZK', creditor: byIban })).toBe('DOMESTIC')
    const byNumber = creditorOf({ creditorAccount: { identification: { other: { identification: '19-2000145399/0800' } } } })
    expect(classifyPayment({ currency: 'CZK', creditor: byNumber })).toBe('DOMESTIC')
    const byAgent = creditorOf({
      creditorAccount: { identification: { other: { identification: '2000145399' } } },
      creditorAgent: { financialInstitutionIdentification: { clearingSystemMemberIdentification: { memberIdentification: '0800' } } },
    })
    expect(classifyPayment({ currency: 'CZK', creditor: byAgent })).toBe('DOMESTIC')
    expect(serviceLevelOf('DOMESTIC', byAgent)).toBe('DMCT')
  })

  it('needs EUR, a SEPA-country IBAN, a creditor name and an end-to-end id for SEPA, else the payment is foreign', () => {
    const de = creditorOf({ creditorAccount: { identification: { iban: 'DE89370400440532013000' } } })
    expect(classifyPayment({ currency: 'EUR', creditor: de, creditorName: 'Max Mustermann', endToEndIdentification: 'E2E1' })).toBe('SEPA')
    expect(serviceLevelOf('SEPA', de)).toBe('ESCT')
    expect(classifyPayment({ currency: 'EUR', creditor: de, creditorName: 'Max Mustermann' })).toBe('FOREIGN')
    expect(classifyPayment({ currency: 'USD', creditor: de, creditorName: 'Max', endToEndIdentification: 'E2E1' })).toBe('FOREIGN')
    expect(serviceLevelOf('FOREIGN', de)).toBe('EXCT')
    const us = creditorOf({ creditorAccount: { identification: { other: { identification: '000123456789' } } }, creditorAgent: { financialInstitutionIdentification: { bic: 'CHASUS33' } } })
    expect(classifyPayment({ currency: 'USD', creditor: us, creditorName: 'John' })).toBe('FOREIGN')
    expect(serviceLevelOf('FOREIGN', us)).toBe('NXCT')
  })

  it('refuses unknown Czech bank codes, bad check digits and bad BICs with their COBS codes', () => {
    expect(resolveCreditor({ creditorAccount: { identification: { other: { identification: '2000145399/1234' } } } }).errors[0]?.error).toBe('RC10')
    expect(resolveCreditor({ creditorAccount: { identification: { other: { identification: '2000145398/0800' } } } }).errors[0]?.error).toBe('AC03')
    expect(resolveCreditor({ creditorAccount: { identification: { iban: 'DE89370400440532013001' } } }).errors[0]?.error).toBe('AC03')
    expect(resolveCreditor({ creditorAccount: { identification: { iban: 'DE89370400440532013000' } }, creditorAgent: { financialInstitutionIdentification: { bic: 'X1' } } }).errors[0]?.error).toBe('RC07')
  })
})
