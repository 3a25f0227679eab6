import { afterAll, describe, expect, it } from 'vitest'
import { createBankClient } from './bank-client.ts'
import {
  BankInvalidArgumentError,
  InstantPaymentRuleError,
  PaymentRequestInvalidError,
  StandingOrderRuleError,
} from './errors.ts'
import { testBankClient } from './fake-bank.test-support.ts'
import { IBAN, payment } from './rules/fixtures.test-support.ts'

// Nothing listens on port 9 of loopback: a call that got past validation would fail with
// BANK_UNAVAILABLE, so the typed validation errors below prove nothing was sent.
const client = testBankClient('http://127.0.0.1:9')
afterAll(() => client.close())

describe('checks before sending', () => {
  it('refuses a page size outside 10..100 before any request, also for the iterator', async () => {
    await expect(client.accounts.getTransactionsPage('acc', { pageSize: 9 })).rejects.toThrow(
      /pageSize must be an integer from 10 to 100/,
    )
    expect(() => client.accounts.transactions('acc', { pageSize: 101 })).toThrow(BankInvalidArgumentError)
    await expect(client.accounts.getTransactionsPage('acc', { dateFrom: '2026-13-01' })).rejects.toThrow(
      /dateFrom must be a calendar date/,
    )
  })

  it('refuses an instant payment breaking the rules with InstantPaymentRuleError', async () => {
    const p = payment({
      paymentTypeInformation: { instructionPriority: 'INST' },
      amount: { instructedAmount: { value: '400000.01', currency: 'CZK' } },
    })
    await expect(client.payments.createPayment(p)).rejects.toBeInstanceOf(InstantPaymentRuleError)
  })

  it('refuses bad IBANs, non-positive amounts and too many decimals', async () => {
    const bad = payment({
      amount: { instructedAmount: { value: '10.001', currency: 'CZK' } },
      creditorAccount: { identification: { iban: 'CZ6608000000192000145399' } },
    })
    const err = await client.payments.createPayment(bad).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PaymentRequestInvalidError)
    expect((err as PaymentRequestInvalidError).violations.map((v) => v.field)).toEqual([
      'amount.instructedAmount.value',
      'creditorAccount.identification.iban',
    ])
    await expect(
      client.payments.createPayment(payment({ amount: { instructedAmount: { value: 0, currency: 'CZK' } } })),
    ).rejects.toThrow(/must be positive/)
  })

  it('refuses unsupported standing orders, and refuses unprocessed fields when asked to', async () => {
    const so = {
      standingOrderIdentification: { instructionIdentification: 'so-1' },
      amount: { instructedAmount: { value: '100', currency: 'CZK' } },
      requestedExecutionDate: '2026-04-01',
      standingOrder: { alias: 'rent', execution: { interval: 'MONTHLY', mode: 'UNTIL_CANCELLATION' } },
      debtorAccount: { identification: { iban: IBAN.rbOther } },
      creditorAccount: { identification: { iban: IBAN.cs } },
    }
    await expect(
      client.payments.createStandingOrder({
        ...so,
        standingOrder: { execution: { interval: 'DAILY', mode: 'UNTIL_CANCELLATION' } },
      }),
    ).rejects.toBeInstanceOf(StandingOrderRuleError)
    await expect(client.payments.createStandingOrder(so, { unprocessedFields: 'refuse' })).rejects.toThrow(
      /standingOrder.alias: is not processed/,
    )
    // with the default policy the alias is dropped and the request is sent (and fails on the network)
    await expect(client.payments.createStandingOrder(so)).rejects.toMatchObject({ code: 'BANK_UNAVAILABLE' })
  })

  it('refuses a relative return URL and a full card number', async () => {
    await expect(client.payments.signPayment('p', 's', '/back')).rejects.toThrow(
      /returnUrl must be an absolute http\(s\) URL/,
    )
    await expect(client.payments.signPayment('p', 's', 'https://app.example/r\r\nX-Evil: 1')).rejects.toThrow(
      BankInvalidArgumentError,
    )
    const check = {
      exchangeIdentification: 'x1',
      card: { maskedPan: '4111 1111 1111 1111' },
      debtorAccount: { identification: { iban: IBAN.cs } },
      transactionDetails: { currency: 'CZK', totalAmount: '10.00' },
    }
    const err = await client.cards.cardBalanceCheck(check).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BankInvalidArgumentError)
    expect(String(err)).not.toContain('4111 1111 1111 1111')
  })

  it('needs an access token from somewhere', async () => {
    const bare = createBankClient({
      baseUrl: 'http://127.0.0.1:9',
      clientId: 'c',
      clientSecret: 's',
      redirectUri: 'http://127.0.0.1/cb',
      tppName: 'T',
    })
    try {
      await expect(bare.accounts.listAccounts()).rejects.toThrow(/no access token/)
      await expect(bare.accounts.listAccounts({ accessToken: async () => '' })).rejects.toThrow(
        /provider returned no token/,
      )
    } finally {
      await bare.close()
    }
  })
})
