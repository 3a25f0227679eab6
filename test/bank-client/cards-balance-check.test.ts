import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BankForbiddenError,
  BankRequestRejectedError,
  formatMinorUnits,
  toMinorUnits,
  type BalanceCheckRequest,
} from '@tep/bank-client'
import { startHarness, type Harness, type SimAccount } from './support/sim-harness.ts'

let h: Harness
let call: { accessToken: string }
let card: SimAccount
let czk: SimAccount

beforeAll(async () => {
  h = await startHarness()
  const accounts = await h.accountsOf('user2')
  czk = accounts.find((a) => a.currency === 'CZK' && a.kind === 'CURRENT')!
  card = accounts.find((a) => a.kind === 'CREDIT_CARD')!
  call = { accessToken: (await h.consent('user2', 'CISP', [czk.id])).accessToken }
})
afterAll(() => h.close())

function check(iban: string, totalAmount: string, currency = 'CZK'): BalanceCheckRequest {
  return {
    exchangeIdentification: `x${Math.floor(Math.random() * 1e9)}`,
    card: { cardholderName: 'Katerina Dvorakova', maskedPan: '4111xxxxxxxx1111' },
    debtorAccount: { identification: { iban } },
    merchant: { shortName: 'ALBERT 0412', merchantCategoryCode: '5411', countryCode: 'CZ' },
    transactionDetails: { currency, totalAmount },
  }
}

describe('cards interface: balance check', () => {
  it('answers APPR when the available balance covers the amount and DECL when not', async () => {
    const available = (
      await h.bank.accounts.getBalance(
        czk.id,
        {},
        { accessToken: (await h.consent('user2', 'AISP')).accessToken },
      )
    ).balances.find((b) => b.type.codeOrProprietary.code === 'CLAV')!
    expect(available.creditDebitIndicator).toBe('CRDT')
    expect(await h.bank.cards.cardBalanceCheck(check(czk.iban, '1.00'), call)).toBe('APPR')
    expect(await h.bank.cards.cardBalanceCheck(check(czk.iban, String(available.amount.value)), call)).toBe(
      'APPR',
    )
    expect(
      await h.bank.cards.cardBalanceCheck(
        check(czk.iban, formatMinorUnits(toMinorUnits(available.amount) + 1n, 'CZK')),
        call,
      ),
    ).toBe('DECL')
  })

  it('refuses an account outside the consent and a currency the account does not hold', async () => {
    await expect(h.bank.cards.cardBalanceCheck(check(card.iban, '1.00'), call)).rejects.toBeInstanceOf(
      BankForbiddenError,
    )
    const err = await h.bank.cards
      .cardBalanceCheck(check(czk.iban, '1.00', 'EUR'), call)
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BankRequestRejectedError)
    expect((err as BankRequestRejectedError).bankCodes).toEqual(['AM11'])
  })

  it('needs the CISP scope: an AISP token is forbidden', async () => {
    const aisp = await h.consent('user2', 'AISP')
    await expect(
      h.bank.cards.cardBalanceCheck(check(czk.iban, '1.00'), { accessToken: aisp.accessToken }),
    ).rejects.toMatchObject({ code: 'BANK_FORBIDDEN', status: 403 })
  })
})
