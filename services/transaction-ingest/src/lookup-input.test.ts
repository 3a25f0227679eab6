import { describe, expect, it } from 'vitest'
import {
  exampleRawBankTransfer,
  exampleRawCardTransaction,
  type BankTransfer,
  type CardTransaction,
  type RawTransaction,
} from '@tep/schemas'
import { cardLookupInput, transferLookup } from './lookup-input.ts'

function cardRaw(card: Partial<CardTransaction>, raw: Partial<RawTransaction> = {}): RawTransaction {
  const base = exampleRawCardTransaction()
  return { ...base, ...raw, card: { ...(base.card as CardTransaction), ...card }, transfer: null }
}

function transferRaw(transfer: Partial<BankTransfer>, raw: Partial<RawTransaction> = {}): RawTransaction {
  const base = exampleRawBankTransfer()
  return { ...base, ...raw, card: null, transfer: { ...(base.transfer as BankTransfer), ...transfer } }
}

describe('card lookup input', () => {
  it('omits absent (null) fields and sends empty ("") fields empty, values untouched', () => {
    const raw = cardRaw({
      merchantId: '  000123456  ',
      terminalId: '',
      description: null,
      city: 'PRAHA',
      country: '',
      mcc: null,
      postalCode: null,
      cardBin: '',
    })
    const input = cardLookupInput(raw, raw.card as CardTransaction)
    expect(input.merchantId).toBe('  000123456  ')
    expect(input.terminalId).toBe('')
    expect('terminalId' in input).toBe(true)
    expect(input.country).toBe('')
    expect(input.cardBin).toBe('')
    expect('description' in input).toBe(false)
    expect('mcc' in input).toBe(false)
    expect('postalCode' in input).toBe(false)
    expect(input.city).toBe('PRAHA')
  })

  it('sends the normalised amount, currency and occurredAt as ISO-8601, and refresh only when true', () => {
    const raw = cardRaw(
      {},
      { amount: '123.45', currency: 'CZK', occurredAt: Date.UTC(2026, 10, 22, 12, 5, 0), refresh: false },
    )
    const input = cardLookupInput(raw, raw.card as CardTransaction)
    expect(input.amount).toBe('123.45')
    expect(input.currency).toBe('CZK')
    expect(input.dateTime).toBe('2026-11-22T12:05:00.000Z')
    expect('refresh' in input).toBe(false)
    const refreshed = cardRaw({}, { refresh: true })
    expect(cardLookupInput(refreshed, refreshed.card as CardTransaction).refresh).toBe('true')
  })

  it('sends every ISO field the raw event carries, street, DE 3 and DE 22 included, absent omitted and empty sent empty', () => {
    const raw = cardRaw({ street: 'Národní 1', processingCode: '', posEntryMode: '051' })
    const input = cardLookupInput(raw, raw.card as CardTransaction)
    expect(input).toMatchObject({ street: 'Národní 1', processingCode: '', posEntryMode: '051' })
    const absent = cardRaw({ street: null, processingCode: null, posEntryMode: null })
    const without = cardLookupInput(absent, absent.card as CardTransaction)
    for (const field of ['street', 'processingCode', 'posEntryMode']) expect(field in without).toBe(false)
  })

  it('sends DE 4, 49 and 12/13 once, as the normalised amount, currency and dateTime, not their raw values as well', () => {
    const raw = cardRaw({ transactionAmount: '000000012345', transactionCurrency: '203', localDateTime: '20240131143000' })
    const values = Object.values(cardLookupInput(raw, raw.card as CardTransaction))
    expect(values).not.toContain('000000012345')
    expect(values).not.toContain('203')
    expect(values).not.toContain('20240131143000')
  })
})

describe('transfer lookup', () => {
  it('maps CERTIS fields to the certis variant, absent omitted and empty kept', () => {
    const raw = transferRaw(
      {
        scheme: 'CERTIS',
        counterpartyAccountPrefix: '',
        counterpartyAccountNumber: '2400123456',
        counterpartyBankCode: '2010',
        counterpartyIban: null,
        variableSymbol: '',
        message: null,
        counterpartyName: 'ACME',
      },
      { refresh: true },
    )
    const lookup = transferLookup(raw, raw.transfer as BankTransfer)
    expect(lookup).toMatchObject({ kind: 'supported', scheme: 'certis' })
    if (lookup.kind !== 'supported') throw new Error('unreachable')
    expect(lookup.input).toMatchObject({
      accountPrefix: '',
      accountNumber: '2400123456',
      bankCode: '2010',
      variableSymbol: '',
      name: 'ACME',
      refresh: 'true',
      amount: raw.amount,
      currency: raw.currency,
    })
    expect('iban' in lookup.input).toBe(false)
    expect('message' in lookup.input).toBe(false)
  })

  it('maps SEPA and UK transfers to their variants with their parameter names', () => {
    const sepa = transferRaw({
      scheme: 'SEPA',
      counterpartyIban: 'DE89370400440532013000',
      counterpartyBic: '',
      message: 'invoice 7',
      endToEndId: null,
    })
    const s = transferLookup(sepa, sepa.transfer as BankTransfer)
    expect(s).toMatchObject({
      kind: 'supported',
      scheme: 'sepa',
      input: { iban: 'DE89370400440532013000', bic: '', remittanceInformation: 'invoice 7' },
    })
    if (s.kind === 'supported') expect('endToEndId' in s.input).toBe(false)
    const uk = transferRaw({
      scheme: 'uk',
      counterpartySortCode: '12-34-56',
      counterpartyAccountNumber: '12345678',
      message: '',
    })
    expect(transferLookup(uk, uk.transfer as BankTransfer)).toMatchObject({
      kind: 'supported',
      scheme: 'uk',
      input: { sortCode: '12-34-56', accountNumber: '12345678', reference: '' },
    })
  })

  it('looks up SWIFT, INTERNAL, OTHER and unknown schemes through the variant that fits what they carry', () => {
    const cases: [Partial<BankTransfer>, string, Record<string, string>][] = [
      // A foreign payment with IBAN and BIC: looked up by IBAN and BIC.
      [
        { scheme: 'SWIFT', counterpartyIban: 'US12000000001234567', counterpartyBic: 'CHASUS33', message: 'inv 9' },
        'sepa',
        { iban: 'US12000000001234567', bic: 'CHASUS33', remittanceInformation: 'inv 9' },
      ],
      // An internal transfer at the bank (bank code 5500): a domestic account.
      [
        { scheme: 'INTERNAL', counterpartyAccountNumber: '1234567890', counterpartyBankCode: '5500' },
        'certis',
        { accountNumber: '1234567890', bankCode: '5500' },
      ],
      [{ scheme: 'INTERNAL', counterpartyIban: 'CZ6555000000001234567890' }, 'certis', { iban: 'CZ6555000000001234567890' }],
      [{ scheme: 'OTHER', counterpartySortCode: '12-34-56', counterpartyAccountNumber: '12345678' }, 'uk', { sortCode: '12-34-56' }],
      [{ scheme: 'JOPACC', counterpartyIban: 'GB29NWBK60161331926819' }, 'uk', { iban: 'GB29NWBK60161331926819' }],
      // Nothing identifying: still sent (the API's 400 is the per-record answer).
      [{ scheme: 'OTHER' }, 'sepa', {}],
    ]
    const bare: Partial<BankTransfer> = {
      counterpartyIban: null,
      counterpartyBic: null,
      counterpartyAccountPrefix: null,
      counterpartyAccountNumber: null,
      counterpartyBankCode: null,
      counterpartySortCode: null,
    }
    for (const [transfer, scheme, input] of cases) {
      const raw = transferRaw({ ...bare, ...transfer })
      const lookup = transferLookup(raw, raw.transfer as BankTransfer)
      expect(lookup, JSON.stringify(transfer)).toMatchObject({
        kind: 'supported',
        scheme,
        input: { ...input, amount: raw.amount, currency: raw.currency },
      })
    }
  })
})
