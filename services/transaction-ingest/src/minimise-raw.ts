/**
 * Data minimisation on the success path (PCI DSS requirement 3): a card number
 * written by mistake into a free-text field of a raw event must reach neither the
 * third-party enrichment API nor `transactions.enriched.v1`, which embeds the raw
 * event. The free-text fields are masked (BIN and last four kept, @tep/observability's
 * one definition of a card number) before the lookup request is built, so the
 * request and the enriched event hold the same masked text; the API's reject
 * reasons are masked too (card numbers and IBANs), since they may echo the input.
 *
 * Masked: the fields a person or a terminal types (names, descriptions, addresses,
 * messages, references) and the card acceptor ids (DE 41 terminal, DE 42 merchant).
 * Not masked, deliberately: fields whose shape leaves no room for a card number or
 * that are validated (`cardBin` at most 8 digits, amounts, currency, dates, country,
 * MCC, the Czech symbols of at most 10 digits), our own ids (transaction, source
 * reference, customer, account: the Kafka key and what joins the topics), and the
 * counterparty's account identifiers (`counterpartyIban`, account number and prefix,
 * bank and sort code, BIC): they are the lookup keys of a bank transfer and
 * account data, not card data; masking them would make every such lookup fail.
 *
 * One exception inside the masked fields: a `merchantId` of exactly 15 ASCII
 * digits is the ISO 8583 DE 42 shape of a merchant id (the simulator's and many
 * acquirers' ids) and is sent as it is, because one in two such ids holds some
 * Luhn-valid window and masking it would break the lookup of that merchant for
 * good. No Visa or Mastercard number has 15 digits; one that, as a whole, passes
 * Luhn and starts like a 15-digit card (1: UATP, 34 and 37: American Express) is
 * masked all the same.
 */
import { maskPansCounted, maskSensitiveTextCounted, passesLuhn } from '@tep/observability'
import type { RawTransaction } from '@tep/schemas'

type Card = NonNullable<RawTransaction['card']>
type Transfer = NonNullable<RawTransaction['transfer']>
type RejectReason = { code: string; message: string; httpStatus: number | null }

/** The free-text fields masked before the enrichment call (see above). */
export const MASKED_CARD_FIELDS = ['merchantId', 'terminalId', 'description', 'street', 'city', 'postalCode'] as const
export const MASKED_TRANSFER_FIELDS = ['counterpartyName', 'message', 'endToEndId', 'counterpartyCity', 'counterpartyPostalCode'] as const

/** Label values of `tep_pan_masked_total{path}`. */
export const PAN_MASKED_PATHS = {
  /** Free-text fields of a raw event, before the enrichment call and the enriched event. */
  enrichmentInput: 'enrichment-input',
  /** Reject reasons of the enrichment API written into enriched events. */
  rejectReason: 'reject-reason',
  /** DLQ records (key, value, headers). */
  dlq: 'dlq',
} as const
export type PanMaskedPath = (typeof PAN_MASKED_PATHS)[keyof typeof PAN_MASKED_PATHS]

/** A DE 42 merchant id that is not a 15-digit card number (see the file's comment). */
function isPlainMerchantId(value: string): boolean {
  return /^[0-9]{15}$/.test(value) && !(/^(1|34|37)/.test(value) && passesLuhn(value))
}

function maskFields<T extends object>(
  record: T,
  fields: readonly (keyof T & string)[],
  keep: (field: string, value: string) => boolean,
): { record: T; masked: number } {
  let out: T | undefined
  let masked = 0
  for (const field of fields) {
    const value: unknown = record[field]
    if (typeof value !== 'string' || keep(field, value)) continue
    const r = maskPansCounted(value)
    if (r.masked === 0) continue
    out ??= { ...record }
    ;(out as Record<string, unknown>)[field] = r.text
    masked += r.masked
  }
  return { record: out ?? record, masked }
}

/**
 * `raw` with card numbers masked in its free-text fields, and how many; `raw`
 * itself (the same object) when there were none, so a caller can keep the bytes
 * it arrived as.
 */
export function minimiseRaw(raw: RawTransaction): { raw: RawTransaction; masked: number } {
  let masked = 0
  let card = raw.card
  let transfer = raw.transfer
  if (card !== null) {
    const r = maskFields<Card>(card, MASKED_CARD_FIELDS, (field, v) => field === 'merchantId' && isPlainMerchantId(v))
    card = r.record
    masked += r.masked
  }
  if (transfer !== null) {
    const r = maskFields<Transfer>(transfer, MASKED_TRANSFER_FIELDS, () => false)
    transfer = r.record
    masked += r.masked
  }
  return masked === 0 ? { raw, masked } : { raw: { ...raw, card, transfer }, masked }
}

/** A reject reason with card numbers and IBANs masked in its code and message, and how many. */
export function minimiseRejectReason(reason: RejectReason): { reason: RejectReason; masked: number } {
  const message = maskSensitiveTextCounted(reason.message)
  const code = maskSensitiveTextCounted(reason.code)
  const masked = message.pans + message.ibans + code.pans + code.ibans
  return masked === 0 ? { reason, masked } : { reason: { ...reason, code: code.text, message: message.text }, masked }
}
