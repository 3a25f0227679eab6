import { describe, expect, it } from 'vitest'
import { IBAN, payment } from './fixtures.test-support.ts'
import { classifyPayment } from './payment-kind.ts'
import { isValidIban, parseCzechAccountNumber } from './iban.ts'
import { isCzechBankCode } from './czech-bank-codes.ts'

const eur = (value = '10.00') => ({ instructedAmount: { value, currency: 'EUR' } })

describe('classifyPayment', () => {
  it('INTERNAL: creditor IBAN with the prefix CZ315500, in any currency', () => {
    expect(
      classifyPayment(payment({ creditorAccount: { identification: { iban: IBAN.rbLiteralPrefix } } })).kind,
    ).toBe('INTERNAL')
    expect(
      classifyPayment(
        payment({
          amount: eur(),
          creditorAccount: { identification: { iban: 'CZ31 5500 0000 0000 0000 0043' } },
        }),
      ).kind,
    ).toBe('INTERNAL')
  })

  it('INTERNAL: a CZ IBAN at bank code 5500 whatever its check digits (the bank code identifies the bank)', () => {
    expect(
      classifyPayment(payment({ creditorAccount: { identification: { iban: IBAN.rbOther } } })),
    ).toMatchObject({ kind: 'INTERNAL', bankCode: '5500' })
  })

  it('DOMESTIC: a CZ IBAN at another bank, even with check digits 31', () => {
    expect(
      classifyPayment(payment({ creditorAccount: { identification: { iban: 'CZ31 0800 0000 0000 0000 0043' } } })).kind,
    ).toBe('DOMESTIC')
  })

  it('INTERNAL: bank code 5500 without an IBAN (account number or creditor agent)', () => {
    expect(
      classifyPayment(
        payment({ creditorAccount: { identification: { other: { identification: '1234567890/5500' } } } }),
      ).kind,
    ).toBe('INTERNAL')
    const viaAgent = payment({
      creditorAccount: { identification: { other: { identification: '1234567890' } } },
      creditorAgent: {
        financialInstitutionIdentification: {
          clearingSystemMemberIdentification: { memberIdentification: '5500' },
        },
      },
    })
    expect(classifyPayment(viaAgent).kind).toBe('INTERNAL')
  })

  it('DOMESTIC: CZK to a CZ IBAN of another bank, or to a valid Czech bank code', () => {
    const r = classifyPayment(payment())
    expect(r).toMatchObject({ kind: 'DOMESTIC', bankCode: '0800' })
    expect(
      classifyPayment(
        payment({ creditorAccount: { identification: { other: { identification: '19-2000145399/0800' } } } }),
      ).kind,
    ).toBe('DOMESTIC')
  })

  it('not DOMESTIC: CZK to an unknown bank code, or a CZ IBAN in another currency', () => {
    expect(
      classifyPayment(
        payment({ creditorAccount: { identification: { other: { identification: '123/9999' } } } }),
      ).kind,
    ).toBe('FOREIGN')
    expect(
      classifyPayment(payment({ amount: { instructedAmount: { value: '1', currency: 'USD' } } })).kind,
    ).toBe('FOREIGN')
  })

  it('SEPA: EUR to a SEPA-country IBAN with creditor name and end-to-end id', () => {
    const sepa = payment({
      amount: eur(),
      paymentIdentification: { instructionIdentification: 'x', endToEndIdentification: 'NOTPROVIDED' },
      creditor: { name: 'Hans Muster' },
      creditorAccount: { identification: { iban: IBAN.de } },
    })
    expect(classifyPayment(sepa).kind).toBe('SEPA')
    // a EUR payment to a CZ IBAN of another bank is SEPA too
    expect(classifyPayment({ ...sepa, creditorAccount: { identification: { iban: IBAN.cs } } }).kind).toBe(
      'SEPA',
    )
  })

  it('FOREIGN: EUR to a SEPA country but missing SEPA fields, naming them', () => {
    const r = classifyPayment(
      payment({ amount: eur(), creditorAccount: { identification: { iban: IBAN.at } } }),
    )
    expect(r.kind).toBe('FOREIGN')
    expect(r.missingSepaFields).toEqual(['creditor.name', 'paymentIdentification.endToEndIdentification'])
  })

  it('FOREIGN: EUR to a non-SEPA country, and the reachability predicate is injectable', () => {
    const p = payment({
      amount: eur(),
      paymentIdentification: { instructionIdentification: 'x', endToEndIdentification: 'e2e' },
      creditor: { name: 'A' },
      creditorAccount: { identification: { iban: IBAN.tr } },
    })
    expect(classifyPayment(p).kind).toBe('FOREIGN')
    expect(classifyPayment(p, { sepaReachable: () => true }).kind).toBe('SEPA')
    expect(
      classifyPayment(
        { ...p, creditorAccount: { identification: { iban: IBAN.de } } },
        { sepaReachable: () => false },
      ).kind,
    ).toBe('FOREIGN')
  })
})

describe('IBAN and account number helpers', () => {
  it('validates check digits', () => {
    expect(isValidIban(IBAN.cs)).toBe(true)
    expect(isValidIban('cz65 0800 0000 1920 0014 5399')).toBe(true)
    expect(isValidIban('CZ6608000000192000145399')).toBe(false)
    expect(isValidIban('CZ65')).toBe(false)
  })

  it('parses Czech account numbers and knows the bank codes', () => {
    expect(parseCzechAccountNumber('19-2000145399/0800')).toEqual({
      prefix: '19',
      number: '2000145399',
      bankCode: '0800',
    })
    expect(parseCzechAccountNumber('2000145399')).toBeUndefined()
    expect(isCzechBankCode('5500')).toBe(true)
    expect(isCzechBankCode('3030')).toBe(true)
    expect(isCzechBankCode('9999')).toBe(false)
  })
})
