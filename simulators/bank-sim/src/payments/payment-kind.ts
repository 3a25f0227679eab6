import { EEA_COUNTRIES, OWN_BANK_CODE, SEPA_COUNTRIES } from '../core/bank-codes.ts'
import type { ResolvedCreditor } from './creditor.ts'

export const PAYMENT_KINDS = ['INTERNAL', 'DOMESTIC', 'SEPA', 'FOREIGN'] as const
export type PaymentKind = (typeof PAYMENT_KINDS)[number]
export type ServiceLevel = 'DMCT' | 'ESCT' | 'EXCT' | 'NXCT'

export interface KindInput {
  currency: string
  creditor: ResolvedCreditor
  creditorName?: string
  endToEndIdentification?: string
}

/**
 * The bank decides the kind from the payment details (spec table):
 * internal when the creditor is at bank 5500; domestic for CZK to a Czech
 * account; SEPA for EUR to a SEPA-country IBAN with the SEPA fields filled;
 * foreign otherwise.
 *
 * ASSUMPTION: the spec's "IBAN starts with CZ315500" is read as "Czech IBAN
 * whose bank code is 5500" (IBAN check digits differ per account, so a literal
 * prefix would leave most of the bank's own accounts out).
 */
export function classifyPayment(input: KindInput): PaymentKind {
  const { creditor } = input
  if (creditor.czech?.bankCode === OWN_BANK_CODE) return 'INTERNAL'
  if (input.currency === 'CZK' && creditor.czech) return 'DOMESTIC'
  if (
    input.currency === 'EUR' &&
    creditor.iban !== undefined &&
    SEPA_COUNTRIES.has(creditor.iban.slice(0, 2)) &&
    (input.creditorName ?? '').trim() !== '' &&
    (input.endToEndIdentification ?? '').trim() !== ''
  ) {
    return 'SEPA'
  }
  return 'FOREIGN'
}

export function serviceLevelOf(kind: PaymentKind, creditor: ResolvedCreditor): ServiceLevel {
  if (kind === 'INTERNAL' || kind === 'DOMESTIC') return 'DMCT'
  if (kind === 'SEPA') return 'ESCT'
  return creditor.country !== undefined && EEA_COUNTRIES.has(creditor.country) ? 'EXCT' : 'NXCT'
}
