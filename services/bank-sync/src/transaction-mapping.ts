import { createHash } from 'node:crypto'
import { formatMinorUnits, toMinorUnits, type Transaction } from '@tep/bank-client'
import type { BankTransaction, BankTransfer, CardTransaction, RawTransaction } from '@tep/schemas'

/**
 * Maps one COBS transaction item of the accounts API to the events bank-sync
 * publishes. The absent-versus-empty rule of the raw events is kept: a field the
 * bank did not send is null, a field it sent empty is "" (values as received).
 */

type Json = Record<string, unknown>

export const BANK_SYNC_SOURCE = 'BANK_SYNC'

function obj(v: unknown): Json | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined
}

function at(root: unknown, path: readonly string[]): unknown {
  let cur: unknown = root
  for (const key of path) {
    const o = obj(cur)
    if (o === undefined || !(key in o)) return undefined
    cur = o[key]
  }
  return cur
}

/** The value at `path` as text: null when absent (or JSON null), "" when sent empty. */
function text(root: unknown, path: readonly string[]): string | null {
  const v = at(root, path)
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  return null
}

/**
 * The details container. COBS examples nest `references`, `relatedParties`, ...
 * inside `entryDetails.transactionDetails`; the v8 OpenAPI puts them directly under
 * `entryDetails`. Both are read, the nested form first.
 */
function detail(item: Transaction, path: readonly string[]): unknown {
  const nested = at(item, ['entryDetails', 'transactionDetails', ...path])
  return nested !== undefined ? nested : at(item, ['entryDetails', ...path])
}

function detailText(item: Transaction, path: readonly string[]): string | null {
  const v = detail(item, path)
  if (typeof v === 'string') return v
  if (typeof v === 'number') return String(v)
  return null
}

function firstPresent(...values: Array<string | null>): string | null {
  for (const v of values) if (v !== null) return v
  return null
}

export interface EntryKey {
  entryReference: string
  fromBank: boolean
}

/**
 * The bank's entryReference, or — when it sends none — a fallback derived from
 * fields that do not change when a pending entry books (amount, currency, direction,
 * bank transaction code, counterparty, references, remittance, description). Twins
 * share the fallback; `occurrence` (their position among identical fallbacks in
 * one read) keeps them apart.
 */
export function entryKey(item: Transaction, occurrence = 0): EntryKey {
  if (typeof item.entryReference === 'string' && item.entryReference !== '') {
    return { entryReference: item.entryReference, fromBank: true }
  }
  return { entryReference: `fb-${fallbackFingerprint(item)}-${occurrence}`, fromBank: false }
}

export function fallbackFingerprint(item: Transaction): string {
  const stable = {
    amount: amountText(item),
    currency: item.amount.currency,
    cdi: item.creditDebitIndicator,
    code: item.bankTransactionCode?.proprietary?.code ?? null,
    references: detail(item, ['references']) ?? null,
    parties: detail(item, ['relatedParties']) ?? null,
    remittance: detail(item, ['remittanceInformation']) ?? null,
    info: detail(item, ['additionalTransactionInformation']) ?? null,
  }
  return createHash('sha256').update(JSON.stringify(stable)).digest('hex').slice(0, 24)
}

/** Deterministic raw-event id of one bank entry, so a redone sync produces the same key. */
export function bankTransactionId(consentId: string, accountId: string, entryReference: string): string {
  const digest = createHash('sha256')
    .update(`${consentId}\u0000${accountId}\u0000${entryReference}`)
    .digest('hex')
  return `bank-${digest.slice(0, 32)}`
}

/** The amount as a plain decimal string with the currency's decimals ("1250.00"). */
export function amountText(item: Transaction): string {
  const minor = toMinorUnits(item.amount)
  return formatMinorUnits(minor < 0n ? -minor : minor, item.amount.currency)
}

export function entryStatus(item: Transaction): 'BOOKED' | 'PENDING' {
  return item.status === 'PDNG' ? 'PENDING' : 'BOOKED'
}

/** The entry's date (booking date; for a pending one, its authorization date), YYYY-MM-DD. */
export function entryDate(item: Transaction): string | null {
  const raw =
    item.bookingDate?.date ?? item.bookingDate?.dateTime ?? item.valueDate?.date ?? item.valueDate?.dateTime
  if (typeof raw !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(raw)) return null
  return raw.slice(0, 10)
}

function isCredit(item: Transaction): boolean {
  return item.creditDebitIndicator === 'CRDT'
}

/** The other side: the creditor of a debit, the debtor of a credit. */
function counterpartyRole(item: Transaction): { party: string; account: string; agent: string } {
  return isCredit(item)
    ? { party: 'debtor', account: 'debtorAccount', agent: 'debtorAgent' }
    : { party: 'creditor', account: 'creditorAccount', agent: 'creditorAgent' }
}

// "Platba kartou" (card payment), "Vraceni platby kartou" (merchant refund), with or without diacritics.
const CARD_INFO_PREFIX = /^\s*(platba|vr[aá]cen[ií] platby) kartou/i

/** Card payment: the bank names a card scheme or masked card, or describes it as a card payment. */
export function isCardPayment(item: Transaction): boolean {
  if (detailText(item, ['references', 'chequeNumber']) !== null) return true
  const info = detailText(item, ['additionalTransactionInformation'])
  return info !== null && CARD_INFO_PREFIX.test(info)
}

export interface Symbols {
  variableSymbol: string | null
  constantSymbol: string | null
  specificSymbol: string | null
}

const SYMBOL = /\b(VS|SS|KS)[:/]?(\d{0,10})\b/gi

/**
 * Czech payment symbols. Structured references (`VS:123`, a string or an array, even
 * the mangled single-string forms seen in COBS examples) first, then the
 * end-to-end id and the unstructured message (`/VS/123/SS/456`).
 */
export function parseSymbols(item: Transaction): Symbols {
  const out: Symbols = { variableSymbol: null, constantSymbol: null, specificSymbol: null }
  const structured = detail(item, [
    'remittanceInformation',
    'structured',
    'creditorReferenceInformation',
    'reference',
  ])
  const sources: string[] = []
  if (Array.isArray(structured)) sources.push(...structured.filter((s): s is string => typeof s === 'string'))
  else if (typeof structured === 'string') sources.push(structured)
  const e2e = detailText(item, ['references', 'endToEndIdentification'])
  if (e2e !== null) sources.push(e2e)
  const message = detailText(item, ['remittanceInformation', 'unstructured'])
  if (message !== null) sources.push(message)
  for (const source of sources) {
    for (const m of source.matchAll(SYMBOL)) {
      const kind = (m[1] ?? '').toUpperCase()
      const value = m[2] ?? ''
      if (kind === 'VS' && out.variableSymbol === null) out.variableSymbol = value
      if (kind === 'KS' && out.constantSymbol === null) out.constantSymbol = value
      if (kind === 'SS' && out.specificSymbol === null) out.specificSymbol = value
    }
  }
  return out
}

export interface LocalAccount {
  prefix: string | null
  number: string | null
  bankCode: string | null
}

/** `19-2000145399/0800`, `2000145399`, `19-2000145399`: the Czech local account form. */
export function parseLocalAccount(other: string | null): LocalAccount {
  if (other === null) return { prefix: null, number: null, bankCode: null }
  const m = /^\s*(?:(\d{1,6})-)?(\d{1,10})(?:\/(\d{4}))?\s*$/.exec(other)
  if (!m) return { prefix: null, number: other, bankCode: null }
  return { prefix: m[1] ?? null, number: m[2] ?? null, bankCode: m[3] ?? null }
}

interface CardInfo {
  mcc: string | null
  terminalId: string | null
  merchantId: string | null
}

/** `Platba kartou; <name>; <city>; <country>; MCC 5411; TID T1; MID M1` (the bank's card description). */
export function parseCardInfo(info: string | null): CardInfo {
  if (info === null) return { mcc: null, terminalId: null, merchantId: null }
  const field = (name: string) => {
    const m = new RegExp(`(?:^|[;,\\s])${name}[:\\s]+([^;,\\s]*)`, 'i').exec(info)
    return m ? (m[1] ?? '') : null
  }
  return { mcc: field('MCC'), terminalId: field('TID'), merchantId: field('MID') }
}

/** First 6 digits of a masked card number when the bank shows them, never more. */
export function cardBinOf(masked: string | null): string | null {
  if (masked === null) return null
  const m = /^(\d{6})/.exec(masked)
  return m ? (m[1] ?? null) : null
}

function cardTransaction(item: Transaction): CardTransaction {
  const role = counterpartyRole(item)
  const party = [role.party]
  const info = detailText(item, ['additionalTransactionInformation'])
  const parsed = parseCardInfo(info)
  const street = detailText(item, ['relatedParties', ...party, 'postalAddress', 'streetName'])
  const building = detailText(item, ['relatedParties', ...party, 'postalAddress', 'buildingNumber'])
  const instructed = obj(detail(item, ['amountDetails', 'instructedAmount', 'amount']))
  return {
    merchantId: parsed.merchantId,
    terminalId: parsed.terminalId,
    description: detailText(item, ['relatedParties', ...party, 'name']),
    street: street === null ? null : building ? `${street} ${building}` : street,
    city: detailText(item, ['relatedParties', ...party, 'postalAddress', 'townName']),
    postalCode: detailText(item, ['relatedParties', ...party, 'postalAddress', 'postCode']),
    country: detailText(item, ['relatedParties', ...party, 'postalAddress', 'country']),
    mcc: parsed.mcc,
    acquirerId: null,
    transactionAmount: instructed ? text(instructed, ['value']) : null,
    transactionCurrency: instructed ? text(instructed, ['currency']) : null,
    localDateTime: item.bookingDate?.dateTime ?? null,
    processingCode: null,
    posEntryMode: null,
    cardBin: cardBinOf(detailText(item, ['references', 'chequeNumber'])),
  }
}

const SEPA_IBAN_COUNTRIES = new Set(
  'AD AT BE BG CH CY CZ DE DK EE ES FI FR GB GI GR HR HU IE IS IT LI LT LU LV MC MT NL NO PL PT RO SE SI SK SM VA'.split(
    ' ',
  ),
)

/**
 * The enrichment lookup variant: CZK with a Czech or local-form counterparty →
 * CERTIS (domestic clearing); EUR to an IBAN of a SEPA country → SEPA; a GB IBAN
 * in GBP → UK; anything else with a BIC → SWIFT; otherwise OTHER.
 */
export function transferScheme(
  currency: string,
  iban: string | null,
  bankCode: string | null,
  bic: string | null,
): string {
  const country = iban !== null && iban.length >= 2 ? iban.slice(0, 2).toUpperCase() : null
  if (currency === 'CZK' && (country === 'CZ' || (country === null && bankCode !== null))) return 'CERTIS'
  if (currency === 'EUR' && country !== null && SEPA_IBAN_COUNTRIES.has(country)) return 'SEPA'
  if (currency === 'GBP' && country === 'GB') return 'UK'
  if (bic !== null && bic !== '') return 'SWIFT'
  return 'OTHER'
}

function bankTransfer(item: Transaction): BankTransfer {
  const role = counterpartyRole(item)
  const iban = detailText(item, ['relatedParties', role.account, 'identification', 'iban'])
  const other = firstPresent(
    detailText(item, ['relatedParties', role.account, 'identification', 'other', 'identification']),
    detailText(item, ['relatedParties', role.account, 'identification', 'other']),
  )
  const local = parseLocalAccount(other)
  const agent = ['relatedAgents', role.agent, 'financialInstitutionIdentification']
  const bankCode = firstPresent(
    detailText(item, [...agent, 'clearingSystemMemberIdentification', 'memberIdentification']),
    local.bankCode,
  )
  const bic = detailText(item, [...agent, 'bic'])
  const symbols = parseSymbols(item)
  return {
    scheme: transferScheme(item.amount.currency, iban, bankCode, bic),
    counterpartyName: detailText(item, ['relatedParties', role.party, 'name']),
    counterpartyAccountPrefix: local.prefix,
    counterpartyAccountNumber: local.number,
    counterpartyBankCode: bankCode,
    counterpartySortCode: null,
    counterpartyIban: iban,
    counterpartyBic: bic,
    counterpartyCity: detailText(item, ['relatedParties', role.party, 'postalAddress', 'townName']),
    counterpartyPostalCode: detailText(item, ['relatedParties', role.party, 'postalAddress', 'postCode']),
    counterpartyCountry: detailText(item, ['relatedParties', role.party, 'postalAddress', 'country']),
    ...symbols,
    message: detailText(item, ['remittanceInformation', 'unstructured']),
    endToEndId: detailText(item, ['references', 'endToEndIdentification']),
    paymentType: item.bankTransactionCode?.proprietary?.code ?? null,
  }
}

export interface EntryContext {
  consentId: string
  customerId: string
  accountId: string
  entry: EntryKey
  fetchedAt: number
}

/** 00:00 UTC of the entry's date (RawTransaction.occurredAt for bank entries). */
export function occurredAt(item: Transaction, fallback: number): number {
  const date = entryDate(item)
  return date === null ? fallback : Date.parse(`${date}T00:00:00Z`)
}

export function toRawTransaction(item: Transaction, ctx: EntryContext): RawTransaction {
  const card = isCardPayment(item)
  return {
    transactionId: bankTransactionId(ctx.consentId, ctx.accountId, ctx.entry.entryReference),
    source: BANK_SYNC_SOURCE,
    sourceReference: `${ctx.consentId}/${ctx.accountId}/${ctx.entry.entryReference}`,
    customerId: ctx.customerId,
    accountId: ctx.accountId,
    occurredAt: occurredAt(item, ctx.fetchedAt),
    receivedAt: ctx.fetchedAt,
    amount: amountText(item),
    currency: item.amount.currency,
    creditDebit: isCredit(item) ? 'CREDIT' : 'DEBIT',
    refresh: false,
    card: card ? cardTransaction(item) : null,
    transfer: card ? null : bankTransfer(item),
  }
}

export function toBankTransaction(
  item: Transaction,
  ctx: EntryContext,
  changeType: BankTransaction['changeType'],
): BankTransaction {
  const card = isCardPayment(item)
  const role = counterpartyRole(item)
  const transfer = bankTransfer(item)
  return {
    consentId: ctx.consentId,
    accountId: ctx.accountId,
    entryReference: ctx.entry.entryReference,
    entryReferenceFromBank: ctx.entry.fromBank,
    changeType,
    status: entryStatus(item),
    amount: amountText(item),
    currency: item.amount.currency,
    creditDebit: isCredit(item) ? 'CREDIT' : 'DEBIT',
    reversal: typeof item.reversalIndicator === 'boolean' ? item.reversalIndicator : null,
    bookingDate: item.bookingDate?.date ?? item.bookingDate?.dateTime ?? null,
    valueDate: item.valueDate?.date ?? item.valueDate?.dateTime ?? null,
    bankTransactionCode: item.bankTransactionCode?.proprietary?.code ?? null,
    counterpartyName: detailText(item, ['relatedParties', role.party, 'name']),
    counterpartyIban: transfer.counterpartyIban,
    counterpartyAccountPrefix: transfer.counterpartyAccountPrefix,
    counterpartyAccountNumber: transfer.counterpartyAccountNumber,
    counterpartyBankCode: transfer.counterpartyBankCode,
    counterpartyBic: transfer.counterpartyBic,
    variableSymbol: transfer.variableSymbol,
    constantSymbol: transfer.constantSymbol,
    specificSymbol: transfer.specificSymbol,
    endToEndId: transfer.endToEndId,
    remittanceInformation: transfer.message,
    additionalInformation: detailText(item, ['additionalTransactionInformation']),
    isCardPayment: card,
    cardScheme: card ? detailText(item, ['references', 'clearingSystemReference']) : null,
    rawJson: JSON.stringify(item),
    transactionId: bankTransactionId(ctx.consentId, ctx.accountId, ctx.entry.entryReference),
    fetchedAt: ctx.fetchedAt,
  }
}
