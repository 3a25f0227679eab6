import { describe, expect, it } from 'vitest'
import { BankInvalidArgumentError } from './errors.ts'
import { compareAmounts, formatMinorUnits, toMinorUnits, toWireNumber } from './money.ts'

describe('money', () => {
  it('parses decimal strings and numbers into minor units per currency', () => {
    expect(toMinorUnits({ value: '400000.00', currency: 'CZK' })).toBe(40000000n)
    expect(toMinorUnits({ value: 0.1, currency: 'EUR' })).toBe(10n)
    expect(toMinorUnits({ value: '12', currency: 'JPY' })).toBe(12n)
    expect(toMinorUnits({ value: '1.234', currency: 'KWD' })).toBe(1234n)
    expect(toMinorUnits({ value: '-5.5', currency: 'CZK' })).toBe(-550n)
    expect(toMinorUnits({ value: '1.2300', currency: 'CZK' })).toBe(123n)
  })

  it('refuses sub-minor-unit precision instead of rounding it away', () => {
    expect(() => toMinorUnits({ value: '400000.004', currency: 'CZK' })).toThrow(
      /more decimals than CZK allows \(2\)/,
    )
    expect(() => toMinorUnits({ value: '1.5', currency: 'JPY' })).toThrow(BankInvalidArgumentError)
  })

  it('refuses exponent forms, NaN, junk and bad currencies', () => {
    expect(() => toMinorUnits({ value: 1e21, currency: 'CZK' })).toThrow(/plain decimal/)
    expect(() => toMinorUnits({ value: Number.NaN, currency: 'CZK' })).toThrow(/plain decimal/)
    expect(() => toMinorUnits({ value: '1,50', currency: 'CZK' })).toThrow(/plain decimal/)
    expect(() => toMinorUnits({ value: '1', currency: 'czk' })).toThrow(/ISO 4217/)
  })

  it('formats minor units with the currency decimals', () => {
    expect(formatMinorUnits(123450n, 'CZK')).toBe('1234.50')
    expect(formatMinorUnits(5n, 'CZK')).toBe('0.05')
    expect(formatMinorUnits(-5n, 'EUR')).toBe('-0.05')
    expect(formatMinorUnits(7n, 'JPY')).toBe('7')
  })

  it('compares without floats, across representations', () => {
    expect(compareAmounts({ value: '400000.01', currency: 'CZK' }, { value: 400000, currency: 'CZK' })).toBe(
      1,
    )
    expect(compareAmounts({ value: '0.30', currency: 'CZK' }, { value: 0.3, currency: 'CZK' })).toBe(0)
    expect(
      compareAmounts({ value: '399999.99', currency: 'CZK' }, { value: '400000', currency: 'CZK' }),
    ).toBe(-1)
    expect(() => compareAmounts({ value: 1, currency: 'CZK' }, { value: 1, currency: 'EUR' })).toThrow(
      /cannot compare/,
    )
  })

  it('produces an exact wire number', () => {
    expect(toWireNumber({ value: '1234.50', currency: 'CZK' })).toBe(1234.5)
    expect(toWireNumber({ value: '99999999999.99', currency: 'CZK' })).toBe(99999999999.99)
  })
})
