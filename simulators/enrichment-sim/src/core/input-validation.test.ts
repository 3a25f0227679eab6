import { describe, expect, it } from 'vitest'
import { ApiError } from '../errors.ts'
import { validateCardInput, validateTransferInput } from './input-validation.ts'

function rejection(fn: () => unknown): { status: number; code: string; parameter?: string } | 'accepted' {
  try {
    fn()
    return 'accepted'
  } catch (err) {
    if (!(err instanceof ApiError)) throw err
    return { status: err.status, code: err.code, ...(err.parameter === undefined ? {} : { parameter: err.parameter }) }
  }
}

describe('validateCardInput', () => {
  it('keeps present-but-empty values apart from absent ones', () => {
    expect(validateCardInput({ terminalId: 'CS000001', city: '', mcc: '' }, 'query')).toEqual({ terminalId: 'CS000001', city: '', mcc: '' })
    expect(validateCardInput({ terminalId: 'CS000001', city: null }, 'json')).toEqual({ terminalId: 'CS000001', city: '' })
  })

  it.each([
    ['mcc', '54A1'],
    ['mcc', '541'],
    ['country', 'CZE'],
    ['amount', '12,50'],
    ['amount', '1e3'],
    ['currency', 'KČ'],
    ['dateTime', 'yesterday'],
    ['dateTime', '2026-13-45T99:00:00Z'],
    ['cardBin', '4111'],
    ['refresh', 'yes'],
    ['merchantId', '1234567890123456'],
  ])('rejects %s=%j with 400 INVALID_PARAMETER naming the parameter', (parameter, value) => {
    expect(rejection(() => validateCardInput({ terminalId: 'CS000001', [parameter]: value }, 'query'))).toEqual({ status: 400, code: 'INVALID_PARAMETER', parameter })
  })

  it('accepts well-formed values of every field', () => {
    const input = { merchantId: '401001234567890', terminalId: 'CS12AB34', description: 'ALBERT 0123 PRAHA 5', city: 'PRAHA 5', country: 'cz', postalCode: '150 00', mcc: '5411', acquirerId: '401834', amount: '-12.5', currency: 'czk', dateTime: '2026-11-22T13:05:00+01:00', cardBin: '411111', refresh: 'true' }
    expect(rejection(() => validateCardInput(input, 'query'))).toBe('accepted')
    expect(rejection(() => validateCardInput({ ...input, dateTime: '2026-11-22' }, 'query'))).toBe('accepted')
  })

  it('reads the ISO fields it does not match on (street, DE 3, DE 22), bounded as the raw event bounds them', () => {
    expect(validateCardInput({ terminalId: 'T', street: 'Národní 1', processingCode: '', posEntryMode: '051' }, 'query')).toEqual({ terminalId: 'T', street: 'Národní 1', processingCode: '', posEntryMode: '051' })
    expect(rejection(() => validateCardInput({ terminalId: 'T', processingCode: '0000000' }, 'query'))).toEqual({ status: 400, code: 'INVALID_PARAMETER', parameter: 'processingCode' })
  })

  it('needs a non-empty identifying parameter', () => {
    expect(rejection(() => validateCardInput({ amount: '1.00' }, 'query'))).toEqual({ status: 400, code: 'NO_IDENTIFYING_PARAMETER' })
    expect(rejection(() => validateCardInput({ merchantId: '', terminalId: ' ', description: '' }, 'query'))).toEqual({ status: 400, code: 'NO_IDENTIFYING_PARAMETER' })
  })

  it('rejects a repeated query parameter and JSON values of the wrong type', () => {
    expect(rejection(() => validateCardInput({ terminalId: ['A', 'B'] }, 'query'))).toEqual({ status: 400, code: 'DUPLICATE_PARAMETER', parameter: 'terminalId' })
    expect(rejection(() => validateCardInput({ terminalId: 12345678 }, 'json'))).toEqual({ status: 400, code: 'INVALID_PARAMETER', parameter: 'terminalId' })
    expect(validateCardInput({ terminalId: 'X', amount: 12.5, refresh: false }, 'json')).toEqual({ terminalId: 'X', amount: '12.5', refresh: 'false' })
  })
})

describe('validateTransferInput', () => {
  it('checks the fields of each scheme and what identifies the account', () => {
    expect(rejection(() => validateTransferInput('certis', { accountNumber: '19', bankCode: '08' }))).toEqual({ status: 400, code: 'INVALID_PARAMETER', parameter: 'bankCode' })
    expect(rejection(() => validateTransferInput('certis', { accountNumber: '123456789' }))).toEqual({ status: 400, code: 'MISSING_PARAMETER', parameter: 'bankCode' })
    expect(rejection(() => validateTransferInput('certis', { message: 'hi' }))).toEqual({ status: 400, code: 'NO_IDENTIFYING_PARAMETER' })
    expect(rejection(() => validateTransferInput('sepa', { iban: 'CZ00 0800 0000 0012 3456 7899' }))).toEqual({ status: 400, code: 'INVALID_PARAMETER', parameter: 'iban' })
    expect(rejection(() => validateTransferInput('sepa', { name: 'x' }))).toEqual({ status: 400, code: 'MISSING_PARAMETER', parameter: 'iban' })
    expect(rejection(() => validateTransferInput('uk', { sortCode: '60-16-13' }))).toEqual({ status: 400, code: 'MISSING_PARAMETER', parameter: 'accountNumber' })
    expect(rejection(() => validateTransferInput('uk', { sortCode: '60-16-13', accountNumber: '31926819' }))).toBe('accepted')
    expect(rejection(() => validateTransferInput('sepa', { iban: 'cz65 0800 0000 1920 0014 5399' }))).toBe('accepted')
    expect(rejection(() => validateTransferInput('sepa', { iban: 'CZ6508000000192000145399', aggCount: '3' }))).toBe('accepted')
    expect(rejection(() => validateTransferInput('sepa', { iban: 'CZ6508000000192000145399', aggCount: '-1' }))).toEqual({ status: 400, code: 'INVALID_PARAMETER', parameter: 'aggCount' })
  })
})
