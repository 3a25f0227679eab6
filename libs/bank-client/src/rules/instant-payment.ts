import { bankToday } from '../dates.ts'
import { InstantPaymentRuleError, type RuleViolation } from '../errors.ts'
import type { PaymentRequest } from '../model/payments.ts'
import { compareAmounts } from '../money.ts'
import { classifyPayment, type PaymentKindOptions } from './payment-kind.ts'

/** The bank's ceiling for one instant payment. */
export const INSTANT_PAYMENT_LIMIT = Object.freeze({ value: '400000.00', currency: 'CZK' })

export function isInstant(request: PaymentRequest): boolean {
  return request.paymentTypeInformation?.instructionPriority === 'INST'
}

/**
 * Every instant-payment condition the bank documents that the client can check: CZK
 * amount of at most 400000, from the CZK bucket of the account, not future dated,
 * domestic (or internal). Reachability of the creditor's bank is only known to the bank
 * (it answers 400, see InstantPaymentRefusedError). Returns all violations, empty if none.
 */
export function instantPaymentViolations(
  request: PaymentRequest,
  now: Date,
  options: PaymentKindOptions = {},
): RuleViolation[] {
  const violations: RuleViolation[] = []
  const amount = request.amount.instructedAmount
  if (amount.currency !== 'CZK') {
    violations.push({
      rule: 'INSTANT_CURRENCY',
      field: 'amount.instructedAmount.currency',
      message: `instant payments are in CZK only, got ${amount.currency}`,
    })
  } else if (compareAmounts(amount, INSTANT_PAYMENT_LIMIT) > 0) {
    violations.push({
      rule: 'INSTANT_AMOUNT_LIMIT',
      field: 'amount.instructedAmount.value',
      message: `instant payments are limited to ${INSTANT_PAYMENT_LIMIT.value} CZK, got ${String(amount.value)} CZK`,
    })
  }
  // The bank does not convert between currencies of one account, so without an explicit
  // bucket a CZK amount is debited from the CZK bucket; an explicit other bucket cannot work.
  const source = request.debtorAccount.currency
  if (source !== undefined && source !== 'CZK') {
    violations.push({
      rule: 'INSTANT_SOURCE_CURRENCY',
      field: 'debtorAccount.currency',
      message: `instant payments must come from a CZK account, got ${source}`,
    })
  }
  const today = bankToday(now)
  if (request.requestedExecutionDate !== undefined && request.requestedExecutionDate > today) {
    violations.push({
      rule: 'INSTANT_FUTURE_DATED',
      field: 'requestedExecutionDate',
      message: `instant payments cannot be future dated: ${request.requestedExecutionDate} is after today (${today}, Prague)`,
    })
  }
  const { kind } = classifyPayment(request, options)
  if (kind !== 'DOMESTIC' && kind !== 'INTERNAL') {
    violations.push({
      rule: 'INSTANT_DOMESTIC_ONLY',
      field: 'creditorAccount',
      message: `instant payments are domestic only, this payment is ${kind}`,
    })
  }
  return violations
}

/** Throws InstantPaymentRuleError when an INST payment breaks a condition; no-op for other priorities. */
export function assertInstantPaymentAllowed(
  request: PaymentRequest,
  now: Date,
  options: PaymentKindOptions = {},
): void {
  if (!isInstant(request)) return
  const violations = instantPaymentViolations(request, now, options)
  if (violations.length > 0) throw new InstantPaymentRuleError(violations)
}
