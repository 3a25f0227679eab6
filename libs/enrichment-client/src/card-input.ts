import { EnrichmentInputError } from './errors.ts'
import { toJsonObject, toQueryParams, type InputValue, type RefreshValue } from './input-encoding.ts'

/**
 * Raw card-transaction data (ISO 8583 fields) for the card lookups. The
 * description asks clients to send "as many of the standard's parameters as they
 * have", and shows none of their names: these are the camelCase names of the
 * raw event's fields (schemas/avro/RawTransaction.avsc). Every field
 * follows the absent-vs-empty convention of InputValue. Values are sent exactly
 * as received from the scheme (padding and case kept).
 */
export interface CardTransactionInput {
  /** DE 42, card acceptor id. */
  merchantId?: InputValue
  /** DE 41, card acceptor terminal id. */
  terminalId?: InputValue
  /** DE 43 name part, the acceptor name as printed. */
  description?: InputValue
  /** Street address of the acceptor (DE 43 extended or scheme-specific). */
  street?: InputValue
  /** DE 43 city part. */
  city?: InputValue
  /** ISO 3166-1 alpha-2. */
  country?: InputValue
  postalCode?: InputValue
  /** DE 18, 4 digits. */
  mcc?: InputValue
  /** DE 32. */
  acquirerId?: InputValue
  /** DE 3, the transaction type (purchase, refund, cash ...). */
  processingCode?: InputValue
  /** DE 22, point-of-service entry mode (tells e-commerce from card-present). */
  posEntryMode?: InputValue
  /** Decimal with a dot, e.g. "123.45" (a string, so no precision is lost). */
  amount?: InputValue
  /** ISO 4217 alphabetic. */
  currency?: InputValue
  /** ISO-8601 date-time or date. */
  dateTime?: InputValue
  /** First 6 digits of the card number. Never the full PAN. */
  cardBin?: InputValue
  /** true when re-running a lookup after a handle-level invalidation. */
  refresh?: RefreshValue
}

export const CARD_INPUT_FIELDS = [
  'merchantId',
  'terminalId',
  'description',
  'street',
  'city',
  'country',
  'postalCode',
  'mcc',
  'acquirerId',
  'processingCode',
  'posEntryMode',
  'amount',
  'currency',
  'dateTime',
  'cardBin',
  'refresh',
] as const satisfies ReadonlyArray<keyof CardTransactionInput>

/** Largest batch the API accepts. */
export const MAX_BATCH_SIZE = 500

/**
 * Refuses a `cardBin` that looks like a full card number: it must never leave
 * the process (nor be logged, so the value is not echoed).
 */
export function assertNoPan(input: CardTransactionInput, operation: string, index?: number): void {
  const bin = input.cardBin
  // Removing separators only shortens the text, so a short one needs no regex pass.
  if (typeof bin === 'string' && bin.length > 8 && bin.replace(/[\s-]/g, '').length > 8) {
    throw new EnrichmentInputError(
      `${operation}: cardBin${index === undefined ? '' : ` of entry ${index}`} holds ${bin.length} characters; ` +
        'send only the first 6 digits of the card number, never the full PAN',
      { operation, details: index === undefined ? {} : { index } },
    )
  }
}

export function cardInputToQuery(input: CardTransactionInput): Record<string, string> {
  return toQueryParams(input, CARD_INPUT_FIELDS)
}

export function cardInputToJson(input: CardTransactionInput): Record<string, string> {
  return toJsonObject(input, CARD_INPUT_FIELDS)
}
