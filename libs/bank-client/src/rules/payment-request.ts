import { assertIsoDate } from '../dates.ts'
import { BankInvalidArgumentError, PaymentRequestInvalidError, type RuleViolation } from '../errors.ts'
import type { AccountReference } from '../model/common.ts'
import type { Amount } from '../money.ts'
import { toMinorUnits } from '../money.ts'
import { isValidIban } from './iban.ts'

/** Checks the parts of a payment or standing order every kind needs, collecting violations. */
export function commonPaymentViolations(input: {
  instructionIdentification: string | undefined
  instructionIdField: string
  amount: Amount | undefined
  requestedExecutionDate: string | undefined
  debtorAccount: AccountReference | undefined
  creditorAccount: AccountReference | undefined
  unstructured: string | undefined
}): RuleViolation[] {
  const v: RuleViolation[] = []
  const id = input.instructionIdentification
  if (!id || id.length > 35) {
    v.push({
      rule: 'INSTRUCTION_ID',
      field: input.instructionIdField,
      message: `must be 1 to 35 characters, got ${id === undefined ? 'none' : `${id.length}`}`,
    })
  }
  if (!input.amount) {
    v.push({ rule: 'AMOUNT', field: 'amount.instructedAmount', message: 'is required' })
  } else {
    try {
      if (toMinorUnits(input.amount, 'amount.instructedAmount') <= 0n) {
        v.push({
          rule: 'AMOUNT',
          field: 'amount.instructedAmount.value',
          message: `must be positive, got ${String(input.amount.value)}`,
        })
      }
    } catch (err) {
      if (!(err instanceof BankInvalidArgumentError)) throw err
      v.push({ rule: 'AMOUNT', field: err.field, message: err.message })
    }
  }
  if (input.requestedExecutionDate !== undefined) {
    try {
      assertIsoDate(input.requestedExecutionDate, 'requestedExecutionDate')
    } catch (err) {
      if (!(err instanceof BankInvalidArgumentError)) throw err
      v.push({ rule: 'DATE', field: 'requestedExecutionDate', message: err.message })
    }
  }
  for (const [name, account] of [
    ['debtorAccount', input.debtorAccount],
    ['creditorAccount', input.creditorAccount],
  ] as const) {
    const ident = account?.identification
    if (!ident?.iban && !ident?.other?.identification) {
      v.push({
        rule: 'ACCOUNT',
        field: `${name}.identification`,
        message: 'needs an iban or other.identification',
      })
    } else if (ident.iban !== undefined && !isValidIban(ident.iban)) {
      v.push({
        rule: 'IBAN',
        field: `${name}.identification.iban`,
        message: `is not a valid IBAN (shape or check digits): ${ident.iban}`,
      })
    }
  }
  if (input.unstructured !== undefined && input.unstructured.length > 140) {
    v.push({
      rule: 'REMITTANCE_LENGTH',
      field: 'remittanceInformation.unstructured',
      message: `is at most 140 characters, got ${input.unstructured.length}`,
    })
  }
  return v
}

export function assertNoViolations(violations: RuleViolation[]): void {
  if (violations.length > 0) throw new PaymentRequestInvalidError(violations)
}
