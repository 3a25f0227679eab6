import type { Transaction } from '@tep/bank-client'
import { rawTransactionProblems } from '@tep/schemas'
import { describe, expect, it } from 'vitest'
import {
  bankTransactionId,
  entryKey,
  parseLocalAccount,
  parseSymbols,
  toBankTransaction,
  toRawTransaction,
  transferScheme,
} from './transaction-mapping.ts'

const ctx = { consentId: 'c-1', customerId: 'cust-1', accountId: 'acc-1', fetchedAt: 1_777_000_000_000 }

function cardItem(overrides: Record<string, unknown> = {}): Transaction {
  return {
    entryReference: 'E1',
    amount: { value: 384.06, currency: 'CZK' },
    creditDebitIndicator: 'DBIT',
    status: 'PDNG',
    bookingDate: { date: '2026-04-03' },
    valueDate: { date: '2026-04-03' },
    bankTransactionCode: { proprietary: { code: '10000105000', issuer: 'CBA' } },
    entryDetails: {
      transactionDetails: {
        references: { chequeNumber: 'xxxxxxxxxxxx1248', clearingSystemReference: 'VISA' },
        relatedParties: {
          creditor: { name: 'VOBELTA 0004 BRNO', postalAddress: { townName: 'BRNO', country: 'CZ' } },
        },
        additionalTransactionInformation:
          'Platba kartou; VOBELTA 0004 BRNO; BRNO; CZ; MCC 7994; TID CSD564G4; MID 401000206341905',
        ...overrides,
      },
    },
  }
}

describe('card payments → RawTransaction.card', () => {
  it('maps the acceptor data the bank shows and keeps absent fields null', () => {
    const raw = toRawTransaction(cardItem(), { ...ctx, entry: entryKey(cardItem()) })
    expect(rawTransactionProblems(raw)).toEqual([])
    expect(raw).toMatchObject({
      transactionId: bankTransactionId('c-1', 'acc-1', 'E1'),
      source: 'BANK_SYNC',
      sourceReference: 'c-1/acc-1/E1',
      amount: '384.06',
      currency: 'CZK',
      creditDebit: 'DEBIT',
      occurredAt: Date.parse('2026-04-03T00:00:00Z'),
      transfer: null,
    })
    expect(raw.card).toEqual({
      merchantId: '401000206341905',
      terminalId: 'CSD564G4',
      description: 'VOBELTA 0004 BRNO',
      street: null,
      city: 'BRNO',
      postalCode: null,
      country: 'CZ',
      mcc: '7994',
      acquirerId: null,
      transactionAmount: null,
      transactionCurrency: null,
      localDateTime: null,
      processingCode: null,
      posEntryMode: null,
      cardBin: null,
    })
  })

  it('keeps an empty value empty (absent ≠ empty) and never copies a card number', () => {
    const item = cardItem({
      relatedParties: {
        creditor: { name: '', postalAddress: { townName: '', country: 'CZ', postCode: '' } },
      },
      references: { chequeNumber: '516844xxxxxx1248' },
      additionalTransactionInformation: 'Platba kartou; ; ; CZ; MCC 5411; TID ; MID M1',
    })
    const raw = toRawTransaction(item, { ...ctx, entry: entryKey(item) })
    expect(raw.card).toMatchObject({
      description: '',
      city: '',
      postalCode: '',
      mcc: '5411',
      terminalId: '',
      merchantId: 'M1',
      cardBin: '516844',
    })
    expect(JSON.stringify(raw)).not.toContain('1248')
  })

  it('maps a merchant refund (credit) with the shop taken from the debtor', () => {
    const refund: Transaction = {
      ...cardItem({
        relatedParties: {
          debtor: { name: 'VOBELTA 0004 BRNO', postalAddress: { townName: 'BRNO', country: 'CZ' } },
          creditor: { name: 'Jan Novak' },
        },
        additionalTransactionInformation:
          'Vraceni platby kartou; VOBELTA 0004 BRNO; BRNO; CZ; MCC 7994; TID CSD564G4; MID 401000206341905',
      }),
      creditDebitIndicator: 'CRDT',
    }
    const raw = toRawTransaction(refund, { ...ctx, entry: entryKey(refund) })
    expect(raw.creditDebit).toBe('CREDIT')
    expect(raw.card).toMatchObject({
      description: 'VOBELTA 0004 BRNO',
      city: 'BRNO',
      mcc: '7994',
      merchantId: '401000206341905',
    })
  })

  it('reads the v8 layout (details directly under entryDetails)', () => {
    const nested = cardItem()
    const flat: Transaction = {
      ...nested,
      entryDetails: { ...(nested.entryDetails?.transactionDetails ?? {}) },
    }
    expect(toRawTransaction(flat, { ...ctx, entry: entryKey(flat) }).card).toEqual(
      toRawTransaction(nested, { ...ctx, entry: entryKey(nested) }).card,
    )
  })
})

function transferItem(
  details: Record<string, unknown>,
  currency = 'CZK',
  cdi: 'DBIT' | 'CRDT' = 'DBIT',
): Transaction {
  return {
    entryReference: 'T1',
    amount: { value: 1250, currency },
    creditDebitIndicator: cdi,
    status: 'BOOK',
    bookingDate: { date: '2026-04-10' },
    bankTransactionCode: { proprietary: { code: '10000101000' } },
    entryDetails: { transactionDetails: details },
  }
}

describe('transfers → RawTransaction.transfer', () => {
  it('maps the counterparty (the creditor of a debit), its account, bank and symbols', () => {
    const item = transferItem({
      references: { endToEndIdentification: 'VS1234567890' },
      relatedParties: {
        creditor: { name: 'ČEZ Prodej' },
        creditorAccount: {
          identification: { iban: 'CZ6508000000192000145399', other: { identification: '19-2000145399' } },
        },
      },
      relatedAgents: {
        creditorAgent: {
          financialInstitutionIdentification: {
            bic: 'GIBACZPX',
            clearingSystemMemberIdentification: { memberIdentification: '0800' },
          },
        },
      },
      remittanceInformation: {
        unstructured: 'zaloha',
        structured: { creditorReferenceInformation: { reference: ['VS:1234567890', 'KS:0308'] } },
      },
    })
    const raw = toRawTransaction(item, { ...ctx, entry: entryKey(item) })
    expect(rawTransactionProblems(raw)).toEqual([])
    expect(raw.card).toBeNull()
    expect(raw.transfer).toEqual({
      scheme: 'CERTIS',
      counterpartyName: 'ČEZ Prodej',
      counterpartyAccountPrefix: '19',
      counterpartyAccountNumber: '2000145399',
      counterpartyBankCode: '0800',
      counterpartySortCode: null,
      counterpartyIban: 'CZ6508000000192000145399',
      counterpartyBic: 'GIBACZPX',
      counterpartyCity: null,
      counterpartyPostalCode: null,
      counterpartyCountry: null,
      variableSymbol: '1234567890',
      constantSymbol: '0308',
      specificSymbol: null,
      message: 'zaloha',
      endToEndId: 'VS1234567890',
      paymentType: '10000101000',
    })
    expect(raw.amount).toBe('1250.00')
  })

  it('takes the debtor of a credit', () => {
    const item = transferItem(
      {
        relatedParties: {
          debtor: { name: 'Employer s.r.o.' },
          debtorAccount: { identification: { other: { identification: '123456789/0100' } } },
        },
      },
      'CZK',
      'CRDT',
    )
    const raw = toRawTransaction(item, { ...ctx, entry: entryKey(item) })
    expect(raw.creditDebit).toBe('CREDIT')
    expect(raw.transfer).toMatchObject({
      counterpartyName: 'Employer s.r.o.',
      counterpartyAccountPrefix: null,
      counterpartyAccountNumber: '123456789',
      counterpartyBankCode: '0100',
      counterpartyIban: null,
    })
  })

  it('chooses the lookup scheme from currency and IBAN', () => {
    expect(transferScheme('CZK', 'CZ6508000000192000145399', null, null)).toBe('CERTIS')
    expect(transferScheme('CZK', null, '0800', null)).toBe('CERTIS')
    expect(transferScheme('EUR', 'DE89370400440532013000', null, 'COBADEFFXXX')).toBe('SEPA')
    expect(transferScheme('GBP', 'GB29NWBK60161331926819', null, null)).toBe('UK')
    expect(transferScheme('USD', 'US00000000', null, 'CHASUS33')).toBe('SWIFT')
    expect(transferScheme('USD', null, null, null)).toBe('OTHER')
  })

  it('parses symbols from arrays, mangled strings and the message', () => {
    const fromString = transferItem({
      remittanceInformation: {
        structured: { creditorReferenceInformation: { reference: 'VS:123456","KS:0308' } },
      },
    })
    expect(parseSymbols(fromString)).toEqual({
      variableSymbol: '123456',
      constantSymbol: '0308',
      specificSymbol: null,
    })
    const fromMessage = transferItem({
      remittanceInformation: { unstructured: '/VS/7418529630/SS/1234567890' },
    })
    expect(parseSymbols(fromMessage)).toEqual({
      variableSymbol: '7418529630',
      constantSymbol: null,
      specificSymbol: '1234567890',
    })
    expect(parseLocalAccount('2000145399')).toEqual({ prefix: null, number: '2000145399', bankCode: null })
  })
})

describe('entry keys and the bank transaction record', () => {
  it('derives the same fallback key for a pending and a booked copy, and separates twins by occurrence', () => {
    const pending = { ...cardItem(), entryReference: undefined }
    const booked = { ...pending, status: 'BOOK', bookingDate: { date: '2026-04-05' } }
    expect(entryKey(pending)).toEqual(entryKey(booked))
    expect(entryKey(pending).fromBank).toBe(false)
    expect(entryKey(pending, 1).entryReference).not.toBe(entryKey(pending, 0).entryReference)
  })

  it('records status, change type and the raw JSON', () => {
    const item = cardItem()
    const record = toBankTransaction(item, { ...ctx, entry: entryKey(item) }, 'ADDED')
    expect(record).toMatchObject({
      entryReference: 'E1',
      entryReferenceFromBank: true,
      changeType: 'ADDED',
      status: 'PENDING',
      isCardPayment: true,
      cardScheme: 'VISA',
      counterpartyName: 'VOBELTA 0004 BRNO',
      transactionId: bankTransactionId('c-1', 'acc-1', 'E1'),
    })
    expect(JSON.parse(record.rawJson)).toEqual(item)
  })
})
