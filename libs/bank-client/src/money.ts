import { BankInvalidArgumentError } from './errors.ts'

/**
 * Money without floats. Amounts cross the API as JSON numbers (COBS), but every
 * comparison and sum here works on integer minor units (bigint) parsed from the decimal
 * text, so 400000.004 can never round into the instant-payment limit.
 */

/** An amount as the bank's JSON carries it. Prefer decimal strings ("1234.50") when building requests. */
export interface Amount {
  readonly value: string | number
  readonly currency: string
}

/** ISO 4217 minor-unit exponents that differ from 2. */
const EXPONENTS: Readonly<Record<string, number>> = {
  BHD: 3,
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  IQD: 3,
  ISK: 0,
  JOD: 3,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  PYG: 0,
  RWF: 0,
  TND: 3,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/

export function assertCurrency(currency: string, field = 'currency'): void {
  if (!/^[A-Z]{3}$/.test(currency)) {
    throw new BankInvalidArgumentError(
      field,
      `${field} must be an ISO 4217 code of three capital letters, got ${JSON.stringify(currency)}`,
    )
  }
}

export function currencyExponent(currency: string): number {
  return EXPONENTS[currency] ?? 2
}

/**
 * The canonical decimal text of a value: numbers are taken by their shortest round-trip
 * text (what JSON.stringify writes), strings must be plain decimals. Exponent forms,
 * NaN and Infinity are refused.
 */
export function decimalText(value: string | number, field = 'amount.value'): string {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : 'NaN') : value.trim()
  if (!DECIMAL.test(text)) {
    throw new BankInvalidArgumentError(
      field,
      `${field} must be a plain decimal number like "1234.50", got ${JSON.stringify(String(value))}`,
    )
  }
  return text
}

/** Integer minor units (e.g. halíře for CZK). Refuses more decimals than the currency has. */
export function toMinorUnits(amount: Amount, field = 'amount'): bigint {
  assertCurrency(amount.currency, `${field}.currency`)
  const text = decimalText(amount.value, `${field}.value`)
  const [, sign, whole, frac = ''] = DECIMAL.exec(text)!
  const exponent = currencyExponent(amount.currency)
  const trimmed = frac.replace(/0+$/, '')
  if (trimmed.length > exponent) {
    throw new BankInvalidArgumentError(
      `${field}.value`,
      `${field}.value ${text} has more decimals than ${amount.currency} allows (${exponent})`,
    )
  }
  const units = BigInt(whole! + trimmed.padEnd(exponent, '0'))
  return sign === '-' ? -units : units
}

/** Decimal text with exactly the currency's decimals: 1234.5 CZK → "1234.50". */
export function formatMinorUnits(units: bigint, currency: string): string {
  const exponent = currencyExponent(currency)
  const negative = units < 0n
  const digits = (negative ? -units : units).toString().padStart(exponent + 1, '0')
  const body = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`
  return negative ? `-${body}` : body
}

/**
 * The JSON number to send for an amount. Checked so that the number's text equals the
 * canonical decimal text: no amount silently changes on the way out.
 */
export function toWireNumber(amount: Amount, field = 'amount'): number {
  const units = toMinorUnits(amount, field)
  const text = formatMinorUnits(units, amount.currency)
  const n = Number(text)
  if (toMinorUnits({ value: n, currency: amount.currency }, field) !== units) {
    throw new BankInvalidArgumentError(
      `${field}.value`,
      `${field}.value ${text} cannot be sent exactly as a JSON number`,
    )
  }
  return n
}

/** Compares two amounts of the same currency: -1, 0 or 1. */
export function compareAmounts(a: Amount, b: Amount): -1 | 0 | 1 {
  if (a.currency !== b.currency) {
    throw new BankInvalidArgumentError('currency', `cannot compare ${a.currency} with ${b.currency}`)
  }
  const x = toMinorUnits(a)
  const y = toMinorUnits(b)
  return x < y ? -1 : x > y ? 1 : 0
}
