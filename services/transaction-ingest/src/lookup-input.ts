import type { CardTransactionInput, TransferInputByScheme, TransferScheme } from '@tep/enrichment-client'
import type { BankTransfer, CardTransaction, RawTransaction } from '@tep/schemas'

/**
 * Builds the findBy request inputs from a raw event.
 *
 * The enrichment spec makes "absent" and "empty" different information: a field
 * the source does not have (Avro null) must be omitted from the request, a field
 * it has with an empty value must be sent empty. Values are forwarded exactly as
 * received (no trimming, no case change), because the service matches on them.
 * `undefined` is how the enrichment client is told to omit a parameter.
 */

export type { TransferScheme }

type LookupValue = string | undefined

export type CardLookupInput = CardTransactionInput

export type TransferLookupInput = TransferInputByScheme[TransferScheme]

export type TransferLookup =
  | { kind: 'supported'; scheme: 'certis'; input: TransferInputByScheme['certis'] }
  | { kind: 'supported'; scheme: 'sepa'; input: TransferInputByScheme['sepa'] }
  | { kind: 'supported'; scheme: 'uk'; input: TransferInputByScheme['uk'] }

/** null (absent at the source) becomes undefined (omitted); "" stays "" (sent empty). */
function present(value: string | null): LookupValue {
  return value === null ? undefined : value
}

/**
 * `refresh` is only ever sent as "true": a normal lookup omits it, which the
 * service treats as false. Sending "false" everywhere would add bytes to every
 * request and say nothing the omission does not.
 */
function refreshOf(raw: RawTransaction): 'true' | undefined {
  return raw.refresh ? 'true' : undefined
}

/**
 * Card lookups send every ISO 8583 field of the raw event ("Clients send as many
 * of the standard's parameters as they have"), each once: the acceptor fields
 * (DE 41, 42, 43 with street, city, postal code and country, DE 18, DE 32), DE 3
 * `processingCode`, DE 22 `posEntryMode` and the BIN; the amount, currency and
 * time (DE 4, 49, 12/13) as the raw event's normalised `amount`, `currency` and
 * `occurredAt` (ISO-8601 UTC), because the API wants a dotted decimal, an
 * alphabetic ISO 4217 code and ISO-8601 where the scheme sends minor units,
 * numeric codes and source-specific formats; sending the raw values as well
 * would give the service two values for one data element. Those three are
 * mandatory in RawTransaction, so they are always sent.
 */
export function cardLookupInput(raw: RawTransaction, card: CardTransaction): CardLookupInput {
  // Built key by key (null fields left out) rather than made whole and then copied
  // without its undefined keys: this runs for every card record.
  const input: { -readonly [K in keyof CardLookupInput]: CardLookupInput[K] } = {}
  if (card.merchantId !== null) input.merchantId = card.merchantId
  if (card.terminalId !== null) input.terminalId = card.terminalId
  if (card.description !== null) input.description = card.description
  if (card.street !== null) input.street = card.street
  if (card.city !== null) input.city = card.city
  if (card.country !== null) input.country = card.country
  if (card.postalCode !== null) input.postalCode = card.postalCode
  if (card.mcc !== null) input.mcc = card.mcc
  if (card.acquirerId !== null) input.acquirerId = card.acquirerId
  if (card.processingCode !== null) input.processingCode = card.processingCode
  if (card.posEntryMode !== null) input.posEntryMode = card.posEntryMode
  input.amount = raw.amount
  input.currency = raw.currency
  input.dateTime = new Date(raw.occurredAt).toISOString()
  if (card.cardBin !== null) input.cardBin = card.cardBin
  if (raw.refresh) input.refresh = 'true'
  return input
}

/**
 * The variant for a scheme the API has none of its own for (SWIFT, INTERNAL,
 * OTHER, anything unknown), chosen by what the transfer carries: a sort code or
 * a GB IBAN is a UK account, a Czech bank code or a CZ IBAN a domestic
 * (CERTIS) one, anything else is looked up by IBAN and BIC (the SEPA variant's
 * parameters). A transfer that carries none of these is still sent: the API
 * answers 400, which is a per-record rejection with the API's own reason.
 */
function variantByContent(transfer: BankTransfer): 'certis' | 'sepa' | 'uk' {
  const country = transfer.counterpartyIban?.slice(0, 2).toUpperCase()
  if ((transfer.counterpartySortCode ?? '') !== '' || country === 'GB') return 'uk'
  if ((transfer.counterpartyBankCode ?? '') !== '' || country === 'CZ') return 'certis'
  return 'sepa'
}

/**
 * Transfers go to the findByBankTransfer variant of their scheme. The
 * description says "The client calls the service for every transaction or
 * transfer" and forbids skipping the call, so a scheme without a variant of its
 * own (SWIFT, INTERNAL, OTHER and anything unknown; the scheme is an open set in
 * RawTransaction) is looked up through the variant that fits what it carries.
 */
export function transferLookup(raw: RawTransaction, transfer: BankTransfer): TransferLookup {
  const common = {
    name: present(transfer.counterpartyName),
    amount: raw.amount,
    currency: raw.currency,
    refresh: refreshOf(raw),
  }
  const scheme = transfer.scheme.toUpperCase()
  const variant =
    scheme === 'CERTIS' ? 'certis' : scheme === 'SEPA' ? 'sepa' : scheme === 'UK' ? 'uk' : variantByContent(transfer)
  switch (variant) {
    case 'certis':
      return {
        kind: 'supported',
        scheme: 'certis',
        input: dropUndefined({
          accountPrefix: present(transfer.counterpartyAccountPrefix),
          accountNumber: present(transfer.counterpartyAccountNumber),
          bankCode: present(transfer.counterpartyBankCode),
          iban: present(transfer.counterpartyIban),
          variableSymbol: present(transfer.variableSymbol),
          constantSymbol: present(transfer.constantSymbol),
          specificSymbol: present(transfer.specificSymbol),
          message: present(transfer.message),
          ...common,
        }),
      }
    case 'sepa':
      return {
        kind: 'supported',
        scheme: 'sepa',
        input: dropUndefined({
          iban: present(transfer.counterpartyIban),
          bic: present(transfer.counterpartyBic),
          remittanceInformation: present(transfer.message),
          endToEndId: present(transfer.endToEndId),
          ...common,
        }),
      }
    case 'uk':
      return {
        kind: 'supported',
        scheme: 'uk',
        input: dropUndefined({
          sortCode: present(transfer.counterpartySortCode),
          accountNumber: present(transfer.counterpartyAccountNumber),
          iban: present(transfer.counterpartyIban),
          reference: present(transfer.message),
          ...common,
        }),
      }
  }
}

/**
 * The input without its undefined keys, so that "omitted" is visible in the
 * object itself (`'city' in input` is false), not only in how a client happens
 * to serialise undefined. A copy, not `delete`: deleting keys turns an object
 * into a slow dictionary, and this runs for every record.
 */
function dropUndefined<T extends object>(input: T): T {
  const record = input as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const key in record) {
    const value = record[key]
    if (value !== undefined) out[key] = value
  }
  return out as T
}
