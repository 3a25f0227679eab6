import type { RawTransaction } from './event-types.ts'

const DECIMAL = /^[0-9]+(\.[0-9]+)?$/
const CURRENCY = /^[A-Z]{3}$/
const BIN = /^[0-9]{6}$/

/**
 * Rules of a RawTransaction that Avro cannot express. Returns every problem found
 * (empty array = valid), each naming the field and the offending shape, never a
 * card number. Producers call it before publishing; transaction-ingest treats a
 * non-empty result as a schema-invalid record (DLQ).
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
  if (!DECIMAL.test(event.amount)) {
    problems.push(
      `amount must be a plain non-negative decimal string like "1234.50", got ${JSON.stringify(event.amount.slice(0, 32))}`,
    )
  }
  if (!CURRENCY.test(event.currency)) {
    problems.push(
      `currency must be an ISO 4217 alphabetic code like "CZK", got ${JSON.stringify(event.currency.slice(0, 16))}`,
    )
  }
  const bin = event.card?.cardBin
  if (bin !== undefined && bin !== null && bin !== '' && !BIN.test(bin)) {
    // Deliberately not echoing the value: it may be a full card number sent by mistake.
    problems.push(
      `card.cardBin must be exactly the first 6 digits of the card number (or null/""), got ${bin.length} characters`,
    )
  }
  if (event.transfer !== null && event.transfer.scheme.length === 0) {
    problems.push('transfer.scheme must not be empty')
  }
  return problems
}
