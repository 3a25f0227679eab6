import { avroSchemas, type BankTransfer, type CardTransaction, type RawTransaction } from '@tep/schemas'
import { RawRecordError, validateRaw } from '@tep/transaction-ingest'

/**
 * The field mapping of input rows to RawTransaction: one flat name per field,
 * nested fields as `card.<field>` and `transfer.<field>`, exactly the names of
 * the Avro schema. A CSV header names the columns with these names (any order,
 * any subset); a JSON line uses them as keys, or nests `card`/`transfer` objects.
 */
export const TOP_FIELDS = [
  'transactionId',
  'source',
  'sourceReference',
  'customerId',
  'accountId',
  'occurredAt',
  'receivedAt',
  'amount',
  'currency',
  'creditDebit',
  'refresh',
] as const

export const CARD_FIELDS = [
  'merchantId',
  'terminalId',
  'description',
  'street',
  'city',
  'postalCode',
  'country',
  'mcc',
  'acquirerId',
  'transactionAmount',
  'transactionCurrency',
  'localDateTime',
  'processingCode',
  'posEntryMode',
  'cardBin',
] as const

export const TRANSFER_FIELDS = [
  'scheme',
  'counterpartyName',
  'counterpartyAccountPrefix',
  'counterpartyAccountNumber',
  'counterpartyBankCode',
  'counterpartySortCode',
  'counterpartyIban',
  'counterpartyBic',
  'counterpartyCity',
  'counterpartyPostalCode',
  'counterpartyCountry',
  'variableSymbol',
  'constantSymbol',
  'specificSymbol',
  'message',
  'endToEndId',
  'paymentType',
] as const

export const KNOWN_FIELDS: readonly string[] = [
  ...TOP_FIELDS,
  ...CARD_FIELDS.map((f) => `card.${f}`),
  ...TRANSFER_FIELDS.map((f) => `transfer.${f}`),
]

/** Value of `source` when a row has none. */
export const DEFAULT_SOURCE = 'BACKFILL'

/** One input row as flat fields: null = absent (the API parameter is omitted), "" = present and empty. */
export type RowFields = Record<string, string | null>

/** Stable codes of a rejected row (the rejects file and the final report use them). */
export const REJECT_CODES = {
  parse: 'ROW_UNPARSABLE',
  unknownField: 'ROW_UNKNOWN_FIELD',
  missingField: 'ROW_MISSING_FIELD',
  badValue: 'ROW_INVALID_VALUE',
  /** The value decoded from the raw topic is not Avro of RawTransaction. */
  undecodable: 'RAW_UNDECODABLE',
} as const

export class RowRejection extends Error {
  readonly code: string
  constructor(code: string, message: string) {
    super(message)
    this.name = 'RowRejection'
    this.code = code
  }
}

const KNOWN = new Set(KNOWN_FIELDS)

/** Flattens one parsed JSON line to RowFields; throws RowRejection for an unusable shape. */
export function jsonToFields(value: unknown): RowFields {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new RowRejection(REJECT_CODES.parse, 'a JSON line must be an object')
  const fields: RowFields = {}
  const put = (name: string, v: unknown): void => {
    if (!KNOWN.has(name)) throw new RowRejection(REJECT_CODES.unknownField, `unknown field ${name}`)
    if (v === null || v === undefined) fields[name] = null
    else if (typeof v === 'string') fields[name] = v
    else if (typeof v === 'boolean' && name === 'refresh') fields[name] = String(v)
    else if (typeof v === 'number' && (name === 'occurredAt' || name === 'receivedAt')) fields[name] = String(v)
    else
      throw new RowRejection(
        REJECT_CODES.badValue,
        `${name} must be a string${name === 'amount' ? ' (money is never a JSON number: write "12.50")' : ''}, got ${typeof v}`,
      )
  }
  for (const [key, v] of Object.entries(value)) {
    if ((key === 'card' || key === 'transfer') && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const [sub, sv] of Object.entries(v)) put(`${key}.${sub}`, sv)
    } else if ((key === 'card' || key === 'transfer') && v === null) {
      continue
    } else put(key, v)
  }
  return fields
}

function timestamp(fields: RowFields, name: string): number | undefined {
  const v = fields[name]
  if (v === null || v === undefined || v === '') return undefined
  if (/^[0-9]{1,15}$/.test(v)) return Number(v)
  // A date without a zone would be read in the machine's zone: refused, not guessed.
  if (!/(Z|[+-][0-9]{2}:?[0-9]{2})$/.test(v))
    throw new RowRejection(
      REJECT_CODES.badValue,
      `${name} must be epoch milliseconds or ISO-8601 with a zone (e.g. 2025-03-01T10:15:00Z), got ${JSON.stringify(v.slice(0, 40))}`,
    )
  const ms = Date.parse(v)
  if (Number.isNaN(ms))
    throw new RowRejection(REJECT_CODES.badValue, `${name} is not a valid date: ${JSON.stringify(v.slice(0, 40))}`)
  return ms
}

function required(fields: RowFields, name: string): string {
  const v = fields[name]
  if (v === null || v === undefined || v === '')
    throw new RowRejection(REJECT_CODES.missingField, `${name} is required`)
  return v
}

function optional(fields: RowFields, name: string): string | null {
  const v = fields[name]
  return v === undefined ? null : v
}

function anyPresent(fields: RowFields, prefix: string, names: readonly string[]): boolean {
  return names.some((n) => {
    const v = fields[`${prefix}.${n}`]
    return v !== null && v !== undefined
  })
}

/**
 * Builds the RawTransaction of a row and validates it exactly like a raw event
 * of the live topic (Avro type, then the ingest's own validateRaw). Throws
 * RowRejection with a specific reason; never returns an invalid event.
 */
export function rowToRaw(fields: RowFields): RawTransaction {
  for (const name of Object.keys(fields))
    if (!KNOWN.has(name)) throw new RowRejection(REJECT_CODES.unknownField, `unknown field ${name}`)
  const occurredAt = timestamp(fields, 'occurredAt')
  if (occurredAt === undefined) throw new RowRejection(REJECT_CODES.missingField, 'occurredAt is required')
  const creditDebit = required(fields, 'creditDebit').toUpperCase()
  if (creditDebit !== 'DEBIT' && creditDebit !== 'CREDIT')
    throw new RowRejection(REJECT_CODES.badValue, `creditDebit must be DEBIT or CREDIT, got ${JSON.stringify(creditDebit.slice(0, 20))}`)
  const refreshText = optional(fields, 'refresh')
  if (refreshText !== null && refreshText !== '' && refreshText !== 'true' && refreshText !== 'false')
    throw new RowRejection(REJECT_CODES.badValue, `refresh must be true or false, got ${JSON.stringify(refreshText.slice(0, 20))}`)
  let card: CardTransaction | null = null
  if (anyPresent(fields, 'card', CARD_FIELDS)) {
    const c: Record<string, string | null> = {}
    for (const f of CARD_FIELDS) c[f] = optional(fields, `card.${f}`)
    card = c as unknown as CardTransaction
  }
  let transfer: BankTransfer | null = null
  if (anyPresent(fields, 'transfer', TRANSFER_FIELDS)) {
    const t: Record<string, string | null> = {}
    for (const f of TRANSFER_FIELDS) t[f] = optional(fields, `transfer.${f}`)
    if (t.scheme === null)
      throw new RowRejection(REJECT_CODES.missingField, 'transfer.scheme is required when a transfer field is set')
    transfer = t as unknown as BankTransfer
  }
  const raw: RawTransaction = {
    transactionId: required(fields, 'transactionId'),
    source: optional(fields, 'source') || DEFAULT_SOURCE,
    sourceReference: optional(fields, 'sourceReference'),
    customerId: optional(fields, 'customerId'),
    accountId: optional(fields, 'accountId'),
    occurredAt,
    receivedAt: timestamp(fields, 'receivedAt') ?? occurredAt,
    amount: required(fields, 'amount'),
    currency: required(fields, 'currency'),
    creditDebit,
    refresh: refreshText === 'true',
    card,
    transfer,
  }
  validateEvent(raw)
  return raw
}

/** The checks a raw event of the live topic gets: Avro type, then validateRaw (the ingest's own rules). */
export function validateEvent(raw: RawTransaction): void {
  const paths: string[] = []
  avroSchemas.RawTransaction.type.isValid(raw, {
    errorHook: (path) => {
      paths.push(path.join('.'))
    },
  })
  if (paths.length > 0)
    throw new RowRejection(REJECT_CODES.badValue, `not a valid RawTransaction at ${paths.slice(0, 5).join(', ')}`)
  try {
    validateRaw(raw)
  } catch (err) {
    if (err instanceof RawRecordError) throw new RowRejection(err.code, err.message)
    throw err
  }
}
