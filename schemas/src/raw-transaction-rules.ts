import type { BankTransfer, CardTransaction, RawTransaction } from './event-types.ts'
import { isIso4217Code } from './iso-4217.ts'

/**
 * Amount: digits, an optional dot and fraction. At most 15 integer digits (the
 * largest amount any payment system carries; ISO 8583 DE 4 is n 12 in minor
 * units) and at most 4 fraction digits (ISO 4217 minor units never exceed 4).
 */
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/
const MAX_INTEGER_DIGITS = 15
const MAX_FRACTION_DIGITS = 4
const CURRENCY = /^[A-Z]{3}$/
const BIN = /^[0-9]{6}$/

/**
 * `occurredAt` and `receivedAt` must lie in [1970-01-01, 2100-01-01) UTC. The
 * bounds are fixed (not relative to now) so that a replay years later judges a
 * record as it was judged when first seen; anything outside is a producer bug
 * (seconds or microseconds instead of milliseconds, a sentinel) and would break
 * the ISO-8601 conversion of the lookup.
 */
export const MIN_TIMESTAMP_MS = 0
export const MAX_TIMESTAMP_MS = Date.UTC(2100, 0, 1)

/**
 * Maximum lengths (UTF-16 code units) of the string fields. ISO 8583 sizes
 * where the field is an ISO 8583 data element, ISO 20022 text types for the
 * transfer fields, generous caps for identifiers. They exist so that no single
 * record can make a request the API refuses for its size (431, 414, 413) and so
 * pause a partition; content rules (an MCC of digits) are the API's to judge.
 */
export const RAW_TOP_LEVEL_MAX_LENGTHS = {
  transactionId: 256,
  source: 64,
  sourceReference: 256,
  customerId: 128,
  accountId: 128,
} as const satisfies Partial<Record<keyof RawTransaction, number>>

export const CARD_MAX_LENGTHS = {
  merchantId: 15, // DE 42 ans 15
  terminalId: 16, // DE 41 ans 8; 16 for scheme-extended terminal ids, as the API accepts
  description: 99, // DE 43 ans..99 (ISO 8583:1993)
  street: 99, // part of DE 43 ans..99
  city: 99, // part of DE 43 ans..99
  postalCode: 16, // no ISO 8583 size; ISO 20022 PstCd Max16Text
  country: 3, // DE 43 country: ISO 3166 alpha-2, alpha-3 or numeric
  mcc: 4, // DE 18 n 4
  acquirerId: 11, // DE 32 n..11
  transactionAmount: 12, // DE 4 n 12
  transactionCurrency: 3, // DE 49 n 3 (or a 3)
  localDateTime: 32, // DE 12/13 (n 6 + n 4, or n 12), or ISO 8601 without zone
  processingCode: 6, // DE 3 n 6
  posEntryMode: 12, // DE 22 n 3 (1987) / an 12 (1993)
  cardBin: 6, // DE 2 truncated to the BIN, checked below
} as const satisfies Record<keyof CardTransaction, number>

export const TRANSFER_MAX_LENGTHS = {
  scheme: 32,
  counterpartyName: 140, // ISO 20022 Nm Max140Text
  counterpartyAccountPrefix: 6, // Czech prefix, up to 6 digits
  counterpartyAccountNumber: 34, // any local format fits the IBAN length
  counterpartyBankCode: 11, // Czech clearing code (4) up to BIC length
  counterpartySortCode: 8, // 6 digits with dashes
  counterpartyIban: 42, // 34 characters + groups separated by spaces
  counterpartyBic: 11, // ISO 9362
  counterpartyCity: 35, // ISO 20022 TwnNm Max35Text
  counterpartyPostalCode: 16, // ISO 20022 PstCd Max16Text
  counterpartyCountry: 3,
  variableSymbol: 10, // Czech VS, up to 10 digits
  constantSymbol: 10, // Czech KS (4 digits; 10 like VS/SS as banks deliver them)
  specificSymbol: 10, // Czech SS, up to 10 digits
  message: 140, // ISO 20022 Ustrd Max140Text
  endToEndId: 35, // ISO 20022 Max35Text
  paymentType: 35,
} as const satisfies Record<keyof BankTransfer, number>

/**
 * Rules of a RawTransaction that Avro cannot express. Returns every problem found
 * (empty array = valid), each naming the field and the offending shape, never a
 * card number and never a long value. Producers call it before publishing;
 * transaction-ingest treats a non-empty result as a schema-invalid record (DLQ).
 */
export function rawTransactionProblems(event: RawTransaction): string[] {
  const problems: string[] = []
  if ((event.card === null) === (event.transfer === null)) {
    problems.push(
      event.card === null
        ? 'exactly one of card or transfer must be set, both are null'
        : 'exactly one of card or transfer must be set, both are set',
    )
  }
  if (event.transactionId.length === 0) problems.push('transactionId must not be empty')
  checkLengths(problems, '', event as unknown as Record<string, unknown>, TOP_LEVEL_LIMITS)
  amountProblems(problems, event.amount)
  if (!CURRENCY.test(event.currency)) {
    problems.push(
      `currency must be an ISO 4217 alphabetic code like "CZK", got ${JSON.stringify(event.currency.slice(0, 16))}`,
    )
  } else if (!isIso4217Code(event.currency)) {
    problems.push(`currency ${JSON.stringify(event.currency)} is not an ISO 4217 currency code`)
  }
  timestampProblems(problems, 'occurredAt', event.occurredAt)
  timestampProblems(problems, 'receivedAt', event.receivedAt)
  if (event.card !== null) {
    checkLengths(problems, 'card.', event.card as unknown as Record<string, unknown>, CARD_LIMITS)
    const bin = event.card.cardBin
    if (bin !== null && bin !== '' && !BIN.test(bin)) {
      // Deliberately not echoing the value: it may be a full card number sent by mistake.
      problems.push(
        `card.cardBin must be exactly the first 6 digits of the card number (or null/""), got ${bin.length} characters`,
      )
    }
  }
  if (event.transfer !== null) {
    if (event.transfer.scheme.length === 0) problems.push('transfer.scheme must not be empty')
    checkLengths(problems, 'transfer.', event.transfer as unknown as Record<string, unknown>, TRANSFER_LIMITS)
  }
  return problems
}

/**
 * The limits as [field, max] lists, made once: every raw record is checked
 * against them on the ingest's hot path, where listing the objects' entries per
 * record was the largest cost of this check.
 */
const TOP_LEVEL_LIMITS: ReadonlyArray<readonly [string, number]> = Object.entries(RAW_TOP_LEVEL_MAX_LENGTHS)
// cardBin has its own rule (exactly six digits), with its own message.
const CARD_LIMITS: ReadonlyArray<readonly [string, number]> = Object.entries(CARD_MAX_LENGTHS).filter(([f]) => f !== 'cardBin')
const TRANSFER_LIMITS: ReadonlyArray<readonly [string, number]> = Object.entries(TRANSFER_MAX_LENGTHS)

function checkLengths(
  problems: string[],
  prefix: string,
  record: Record<string, unknown>,
  limits: ReadonlyArray<readonly [string, number]>,
): void {
  for (let i = 0; i < limits.length; i++) {
    const [field, max] = limits[i]!
    const value = record[field]
    if (typeof value === 'string' && value.length > max) {
      problems.push(`${prefix}${field} must be at most ${max} characters, got ${value.length}`)
    }
  }
}

function amountProblems(problems: string[], amount: string): void {
  if (!DECIMAL.test(amount)) {
    problems.push(
      `amount must be a plain non-negative decimal string like "1234.50", got ${JSON.stringify(amount.slice(0, 32))}${amount.length > 32 ? ` (${amount.length} characters)` : ''}`,
    )
    return
  }
  const point = amount.indexOf('.')
  const integerDigits = point < 0 ? amount.length : point
  const fractionDigits = point < 0 ? 0 : amount.length - point - 1
  if (integerDigits > MAX_INTEGER_DIGITS) {
    problems.push(
      `amount must have at most ${MAX_INTEGER_DIGITS} integer digits, got ${integerDigits}`,
    )
  }
  if (fractionDigits > MAX_FRACTION_DIGITS) {
    problems.push(
      `amount must have at most ${MAX_FRACTION_DIGITS} fraction digits (ISO 4217 minor units), got ${fractionDigits}`,
    )
  }
}

function timestampProblems(problems: string[], field: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < MIN_TIMESTAMP_MS || value >= MAX_TIMESTAMP_MS) {
    problems.push(
      `${field} must be epoch milliseconds in [1970-01-01, 2100-01-01) UTC, got ${String(value)}`,
    )
  }
}
