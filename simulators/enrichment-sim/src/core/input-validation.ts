import { isValidIban } from '@tep/sim-data'
import { ApiError, invalidParameter } from '../errors.ts'

/**
 * Validation of lookup inputs, shared by the query-string and JSON forms. Values
 * arrive as strings ('' = the client has the field but it is empty, which is valid
 * information); a parameter that is not there stays undefined. Unknown parameters
 * are ignored so that clients sending newer fields keep working.
 */
export type LookupInput = Record<string, string | undefined>

interface FieldRule {
  /** Applied to non-empty values only. */
  pattern?: RegExp
  maxLength?: number
  check?: (value: string) => boolean
  expected: string
}

const DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/
const validDateTime = (v: string): boolean => ISO_DATE_TIME.test(v) && !Number.isNaN(Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v))

const COMMON: Record<string, FieldRule> = {
  amount: { pattern: DECIMAL, expected: 'a decimal number with a dot, e.g. 123.45' },
  currency: { pattern: /^[A-Za-z]{3}$/, expected: 'an ISO 4217 alphabetic currency code, e.g. CZK' },
  refresh: { pattern: /^(true|false)$/, expected: '"true" or "false"' },
}

export const CARD_FIELDS: Record<string, FieldRule> = {
  merchantId: { maxLength: 15, expected: 'the card acceptor id (ISO 8583 DE 42), at most 15 characters' },
  terminalId: { maxLength: 16, expected: 'the terminal id (ISO 8583 DE 41), at most 16 characters' },
  description: { maxLength: 99, expected: 'the printed acceptor name, at most 99 characters' },
  street: { maxLength: 99, expected: 'a street address, at most 99 characters' },
  city: { maxLength: 99, expected: 'a city name, at most 99 characters' },
  country: { pattern: /^[A-Za-z]{2}$/, expected: 'an ISO 3166-1 alpha-2 country code, e.g. CZ' },
  postalCode: { maxLength: 16, expected: 'a postal code, at most 16 characters' },
  mcc: { pattern: /^[0-9]{4}$/, expected: 'a merchant category code of exactly 4 digits' },
  acquirerId: { maxLength: 11, expected: 'the acquiring institution id, at most 11 characters' },
  // Not used for matching; read (and bounded as the raw event bounds them) so that a client sending them is served.
  processingCode: { maxLength: 6, expected: 'the processing code (ISO 8583 DE 3), at most 6 characters' },
  posEntryMode: { maxLength: 12, expected: 'the point-of-service entry mode (ISO 8583 DE 22), at most 12 characters' },
  amount: COMMON.amount as FieldRule,
  currency: COMMON.currency as FieldRule,
  dateTime: { check: validDateTime, expected: 'an ISO-8601 date or date-time, e.g. 2026-11-22T13:05:00+01:00' },
  cardBin: { pattern: /^[0-9]{6}$/, expected: 'the first 6 digits of the card number' },
  refresh: COMMON.refresh as FieldRule,
}

/** Bank transfers only: identical records collapsed by the client since its last call (the vendor's public bank-transfer guide). */
const aggCount: FieldRule = { pattern: /^[0-9]{1,9}$/, expected: 'a non-negative whole number of collapsed records' }
const iban: FieldRule = { check: isValidIban, expected: 'a valid IBAN (spaces allowed; the check digits are verified)' }
const symbol: FieldRule = { pattern: /^[0-9]{1,10}$/, expected: 'up to 10 digits' }

export const TRANSFER_FIELDS: Record<'certis' | 'sepa' | 'uk', Record<string, FieldRule>> = {
  certis: {
    accountPrefix: { pattern: /^[0-9]{1,6}$/, expected: 'an account number prefix of up to 6 digits' },
    accountNumber: { pattern: /^[0-9]{2,10}$/, expected: 'an account number of 2 to 10 digits' },
    bankCode: { pattern: /^[0-9]{4}$/, expected: 'a Czech bank code of 4 digits, e.g. 0800' },
    iban,
    name: { expected: 'text' },
    variableSymbol: symbol,
    constantSymbol: symbol,
    specificSymbol: symbol,
    message: { expected: 'text' },
    ...COMMON,
    aggCount,
  },
  sepa: {
    iban,
    bic: { pattern: /^[A-Za-z0-9]{8}([A-Za-z0-9]{3})?$/, expected: 'a BIC of 8 or 11 characters' },
    name: { expected: 'text' },
    remittanceInformation: { expected: 'text' },
    endToEndId: { expected: 'text' },
    ...COMMON,
    aggCount,
  },
  uk: {
    sortCode: { pattern: /^[0-9]{2}-?[0-9]{2}-?[0-9]{2}$/, expected: 'a sort code of 6 digits, dashes allowed, e.g. 60-16-13' },
    accountNumber: { pattern: /^[0-9]{8}$/, expected: 'a UK account number of 8 digits' },
    iban,
    name: { expected: 'text' },
    reference: { expected: 'text' },
    ...COMMON,
    aggCount,
  },
}

/**
 * Reads the known fields from a query string or JSON object. JSON `null` is an
 * empty value; `amount` may be a JSON number and `refresh` a boolean.
 */
export function readFields(raw: Record<string, unknown>, fields: Record<string, FieldRule>, source: 'query' | 'json'): LookupInput {
  const out: LookupInput = {}
  for (const [name, rule] of Object.entries(fields)) {
    const value = raw[name]
    if (value === undefined) continue
    let text: string
    if (Array.isArray(value)) {
      throw new ApiError(400, 'DUPLICATE_PARAMETER', `parameter ${name} is given ${value.length} times; send it once`, { parameter: name })
    } else if (typeof value === 'string') {
      text = value
    } else if (value === null && source === 'json') {
      text = ''
    } else if (typeof value === 'number' && name === 'amount' && Number.isFinite(value)) {
      text = String(value)
    } else if (typeof value === 'boolean' && name === 'refresh') {
      text = String(value)
    } else {
      throw invalidParameter(name, `${name} must be a string or null, got ${JSON.stringify(value)}`)
    }
    if (text !== '') {
      const tooLong = rule.maxLength !== undefined && text.length > rule.maxLength
      const badPattern = rule.pattern !== undefined && !rule.pattern.test(text)
      const failedCheck = rule.check !== undefined && !rule.check(text)
      if (tooLong || badPattern || failedCheck) throw invalidParameter(name, `${name} must be ${rule.expected}, got ${JSON.stringify(text.slice(0, 100))}`)
    }
    out[name] = text
  }
  return out
}

const nonEmpty = (value: string | undefined): boolean => value !== undefined && value.trim() !== ''

export function validateCardInput(raw: Record<string, unknown>, source: 'query' | 'json'): LookupInput {
  const input = readFields(raw, CARD_FIELDS, source)
  if (!nonEmpty(input.merchantId) && !nonEmpty(input.terminalId) && !nonEmpty(input.description)) {
    throw new ApiError(400, 'NO_IDENTIFYING_PARAMETER', 'a card lookup needs at least one of merchantId, terminalId or description with a non-empty value')
  }
  return input
}

export function validateTransferInput(scheme: 'certis' | 'sepa' | 'uk', raw: Record<string, unknown>): LookupInput {
  const input = readFields(raw, TRANSFER_FIELDS[scheme], 'query')
  switch (scheme) {
    case 'certis':
      if (nonEmpty(input.accountNumber) && !nonEmpty(input.bankCode)) throw new ApiError(400, 'MISSING_PARAMETER', 'accountNumber needs bankCode (4 digits) to identify the account', { parameter: 'bankCode' })
      if (!nonEmpty(input.accountNumber) && !nonEmpty(input.iban)) throw new ApiError(400, 'NO_IDENTIFYING_PARAMETER', 'a CERTIS transfer lookup needs accountNumber with bankCode, or iban')
      break
    case 'sepa':
      if (!nonEmpty(input.iban)) throw new ApiError(400, 'MISSING_PARAMETER', 'a SEPA transfer lookup needs the counterparty iban', { parameter: 'iban' })
      break
    case 'uk':
      if (nonEmpty(input.accountNumber) !== nonEmpty(input.sortCode)) {
        const missing = nonEmpty(input.accountNumber) ? 'sortCode' : 'accountNumber'
        throw new ApiError(400, 'MISSING_PARAMETER', 'sortCode and accountNumber identify a UK account only together', { parameter: missing })
      }
      if (!nonEmpty(input.accountNumber) && !nonEmpty(input.iban)) throw new ApiError(400, 'NO_IDENTIFYING_PARAMETER', 'a UK transfer lookup needs sortCode with accountNumber, or iban')
      break
  }
  return input
}
