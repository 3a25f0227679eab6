import type { PaymentRequest } from '../model/payments.ts'
import { OWN_BANK_CODE, isCzechBankCode } from './czech-bank-codes.ts'
import { czechBankCodeOfIban, normalizeIban, parseCzechAccountNumber } from './iban.ts'
import { SEPA_COUNTRIES } from './sepa-countries.ts'

/** Creditor IBAN prefix of internal payments, as the bank's payment-kind table gives it. */
export const INTERNAL_IBAN_PREFIX = 'CZ315500'

export type PaymentKind = 'INTERNAL' | 'DOMESTIC' | 'SEPA' | 'FOREIGN'

export interface PaymentKindResult {
  kind: PaymentKind
  /** Why this kind, for logs and support. */
  reason: string
  /** Creditor bank code when one is known (from a CZ IBAN, the account number or the creditor agent). */
  bankCode: string | undefined
  /** For EUR payments to a SEPA country: the SEPA fields still missing (then the kind is FOREIGN). */
  missingSepaFields: string[]
}

/** Whether the creditor's bank (by normalized IBAN) is reachable by SEPA credit transfer. */
export type SepaReachable = (iban: string) => boolean

export interface PaymentKindOptions {
  /** Default: the IBAN's country is in the SEPA scheme. */
  sepaReachable?: SepaReachable
}

/** The fields a SEPA credit transfer needs beyond the EUR amount and a reachable IBAN. */
export function missingSepaFields(request: PaymentRequest): string[] {
  const missing: string[] = []
  if (!request.creditorAccount.identification.iban) missing.push('creditorAccount.identification.iban')
  if (!request.creditor?.name?.trim()) missing.push('creditor.name')
  if (!request.paymentIdentification.endToEndIdentification?.trim())
    missing.push('paymentIdentification.endToEndIdentification')
  return missing
}

function creditorBankCode(request: PaymentRequest, iban: string | undefined): string | undefined {
  if (iban) return czechBankCodeOfIban(iban)
  const other = request.creditorAccount.identification.other?.identification
  const fromNumber = other === undefined ? undefined : parseCzechAccountNumber(other)?.bankCode
  return (
    fromNumber ??
    request.creditorAgent?.financialInstitutionIdentification.clearingSystemMemberIdentification
      ?.memberIdentification
  )
}

/**
 * The kind the bank will give a payment, decided from its details as the bank's table says:
 * internal (to this bank), domestic (CZK within the Czech clearing), SEPA (EUR, reachable,
 * SEPA fields filled) or foreign (anything else). The bank decides in the end; this lets the
 * client apply kind-specific rules (instant is domestic only) before sending.
 */
export function classifyPayment(
  request: PaymentRequest,
  options: PaymentKindOptions = {},
): PaymentKindResult {
  const rawIban = request.creditorAccount.identification.iban
  const iban = rawIban ? normalizeIban(rawIban) : undefined
  const currency = request.amount.instructedAmount.currency
  const bankCode = creditorBankCode(request, iban)
  const base = { bankCode, missingSepaFields: [] as string[] }

  // The contract's "IBAN starts with CZ315500" names the bank's own IBANs, but in a
  // Czech IBAN the two digits after CZ are per-account check digits (CZkk BBBB ...),
  // so read literally it would classify by checksum. What identifies the bank is the
  // bank code 5500 in positions 5-8; the bank simulator decides the same way
  // (docs/DECISIONS.md). The literal prefix is one case of it.
  if (iban !== undefined && (iban.startsWith(INTERNAL_IBAN_PREFIX) || (iban.startsWith('CZ') && iban.slice(4, 8) === OWN_BANK_CODE))) {
    return { ...base, kind: 'INTERNAL', reason: `creditor IBAN is at bank code ${OWN_BANK_CODE}` }
  }
  if (!iban && bankCode === OWN_BANK_CODE) {
    return { ...base, kind: 'INTERNAL', reason: `creditor bank code is ${OWN_BANK_CODE} (no IBAN)` }
  }
  if (currency === 'CZK' && iban?.startsWith('CZ')) {
    return { ...base, kind: 'DOMESTIC', reason: 'CZK to a CZ IBAN' }
  }
  if (currency === 'CZK' && !iban && bankCode !== undefined && isCzechBankCode(bankCode)) {
    return { ...base, kind: 'DOMESTIC', reason: `CZK to Czech bank code ${bankCode}` }
  }
  if (currency === 'EUR' && iban) {
    const reachable = options.sepaReachable ?? ((i: string) => SEPA_COUNTRIES.has(i.slice(0, 2)))
    if (reachable(iban)) {
      const missing = missingSepaFields(request)
      if (missing.length === 0)
        return { ...base, kind: 'SEPA', reason: 'EUR to a SEPA-reachable IBAN with all SEPA fields' }
      return {
        ...base,
        missingSepaFields: missing,
        kind: 'FOREIGN',
        reason: `EUR to a SEPA country but missing ${missing.join(', ')}`,
      }
    }
    return { ...base, kind: 'FOREIGN', reason: `EUR to ${iban.slice(0, 2)}, which is not SEPA reachable` }
  }
  return {
    ...base,
    kind: 'FOREIGN',
    reason: `${currency} payment outside the internal, domestic and SEPA conditions`,
  }
}
