import { describe, expect, it } from 'vitest'
import { assertNoPan, cardInputToJson, cardInputToQuery, type CardTransactionInput } from './card-input.ts'
import { EnrichmentInputError } from './errors.ts'
import { toQueryParams } from './input-encoding.ts'
import { TRANSFER_INPUT_FIELDS, type CertisTransferInput } from './transfer-input.ts'

describe('card input encoding (absent vs empty)', () => {
  const input: CardTransactionInput = {
    merchantId: '000123456789012',
    terminalId: undefined,
    description: 'ALBERT 0123 PRAHA 5',
    city: null,
    mcc: '',
    refresh: true,
  }

  it('omits undefined fields and sends null and "" as empty values in a query', () => {
    expect(cardInputToQuery(input)).toEqual({
      merchantId: '000123456789012',
      description: 'ALBERT 0123 PRAHA 5',
      city: '',
      mcc: '',
      refresh: 'true',
    })
    expect('terminalId' in cardInputToQuery(input)).toBe(false)
  })

  it('sends empty JSON members as "" and leaves absent ones out', () => {
    const json = JSON.stringify(cardInputToJson(input))
    expect(JSON.parse(json)).toEqual({
      merchantId: '000123456789012',
      description: 'ALBERT 0123 PRAHA 5',
      city: '',
      mcc: '',
      refresh: 'true',
    })
    expect(json).not.toContain('terminalId')
  })

  it('reads only the API fields, so nothing else on the caller object reaches the wire', () => {
    const withExtras = { ...input, pan: '4111111111111111', transactionId: 'tx-1' } as CardTransactionInput
    expect(Object.keys(cardInputToQuery(withExtras))).not.toContain('pan')
    expect(JSON.stringify(cardInputToJson(withExtras))).not.toContain('4111111111111111')
  })

  it('keeps field order stable and values untouched (padding, case, diacritics)', () => {
    const q = cardInputToQuery({ cardBin: '411111', city: 'Ústí nad Labem', merchantId: '  M1 ' })
    expect(Object.entries(q)).toEqual([
      ['merchantId', '  M1 '],
      ['city', 'Ústí nad Labem'],
      ['cardBin', '411111'],
    ])
  })

  it('sends every ISO field the raw event carries (street, DE 3, DE 22 too), absent omitted and empty sent empty', () => {
    const iso: CardTransactionInput = { merchantId: 'M1', street: 'Národní 1', processingCode: '', posEntryMode: '051' }
    expect(cardInputToQuery(iso)).toEqual({ merchantId: 'M1', street: 'Národní 1', processingCode: '', posEntryMode: '051' })
    expect(cardInputToJson({ merchantId: 'M1', processingCode: null })).toEqual({ merchantId: 'M1', processingCode: '' })
    expect('street' in cardInputToJson({ merchantId: 'M1', street: undefined })).toBe(false)
  })

  it('refuses an untyped caller passing an object as a value', () => {
    expect(() => cardInputToQuery({ mcc: { code: 5411 } } as unknown as CardTransactionInput)).toThrow(
      EnrichmentInputError,
    )
  })
})

describe('assertNoPan', () => {
  it('refuses a full card number in cardBin without echoing it', () => {
    const pan = '4111 1111 1111 1111'
    let error: unknown
    try {
      assertNoPan({ cardBin: pan }, 'enrichment.findByCardTransaction', 3)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(EnrichmentInputError)
    expect((error as Error).message).toMatch(
      /cardBin of entry 3 holds 19 characters; send only the first 6 digits/,
    )
    expect(JSON.stringify((error as EnrichmentInputError).toJSON())).not.toContain('1111')
  })

  it('accepts a BIN, an empty value and an absent one', () => {
    expect(() => assertNoPan({ cardBin: '41111111' }, 'op')).not.toThrow()
    expect(() => assertNoPan({ cardBin: '' }, 'op')).not.toThrow()
    expect(() => assertNoPan({ cardBin: null }, 'op')).not.toThrow()
    expect(() => assertNoPan({}, 'op')).not.toThrow()
  })
})

describe('transfer input encoding', () => {
  it('uses the scheme field list and the same absent/empty rule', () => {
    const input: CertisTransferInput = {
      accountNumber: '2000145399',
      bankCode: '0800',
      accountPrefix: null,
      iban: undefined,
      name: 'Albert',
      message: '',
    }
    const q = toQueryParams(input, TRANSFER_INPUT_FIELDS.certis)
    expect(q).toEqual({
      accountPrefix: '',
      accountNumber: '2000145399',
      bankCode: '0800',
      name: 'Albert',
      message: '',
    })
  })
})
