import { czechBank } from '../core/bank-codes.ts'
import type { CobsErrorItem } from '../errors.ts'
import type { PaymentKind } from './payment-kind.ts'
import type { ResolvedCreditor } from './creditor.ts'

export const INSTANT_LIMIT_CZK_MINOR = 400_000 * 100

export interface InstantInput {
  kind: PaymentKind
  amountMinor: number
  currency: string
  debtorCurrency: string
  /** Requested execution date, or undefined for "now". */
  requestedExecutionDate?: string
  today: string
  creditor: ResolvedCreditor
}

/**
 * Conditions of an instant payment (spec: at most 400000 CZK, CZK source account,
 * not future dated, beneficiary bank takes part). Every failed condition is one
 * `NO_PART` error, so the application sees all reasons at once and re-initiates
 * the payment as NORM or HIGH.
 */
export function instantPaymentErrors(input: InstantInput): CobsErrorItem[] {
  const errors: CobsErrorItem[] = []
  const fail = (scope: string, reason: string, message: string, extra: Record<string, string> = {}): void => {
    errors.push({ error: 'NO_PART', scope, parameters: { REASON: reason, ...extra }, message })
  }
  if (input.kind !== 'INTERNAL' && input.kind !== 'DOMESTIC') {
    fail('paymentTypeInformation.instructionPriority', 'NOT_DOMESTIC', `instant payments are domestic only; this payment is ${input.kind}`)
  }
  if (input.currency !== 'CZK' || input.amountMinor > INSTANT_LIMIT_CZK_MINOR) {
    fail('amount.instructedAmount', 'AMOUNT_ABOVE_LIMIT', `instant payments carry at most 400000 CZK, got ${input.amountMinor / 100} ${input.currency}`, { LIMIT: '400000', CURRENCY: 'CZK' })
  }
  if (input.debtorCurrency !== 'CZK') {
    fail('debtorAccount', 'DEBTOR_CURRENCY_NOT_CZK', `instant payments need a CZK source account, this one is ${input.debtorCurrency}`)
  }
  if (input.requestedExecutionDate !== undefined && input.requestedExecutionDate > input.today) {
    fail('requestedExecutionDate', 'FUTURE_DATED', `instant payments cannot be future dated (${input.requestedExecutionDate} is after ${input.today})`)
  }
  const bankCode = input.creditor.czech?.bankCode
  if (bankCode !== undefined && czechBank(bankCode)?.instant !== true) {
    fail('creditorAccount', 'CREDITOR_BANK_NOT_REACHABLE', `bank ${bankCode} does not take part in instant payments`, { BANK_CODE: bankCode })
  }
  return errors
}
