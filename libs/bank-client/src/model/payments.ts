import type { Amount } from '../money.ts'
import type { AccountReference, FinancialInstitution, Open, Party, RemittanceInformation } from './common.ts'

/** `NORM` normal (default), `HIGH` express (same day), `INST` instant. */
export type InstructionPriority = 'NORM' | 'HIGH' | 'INST'

/** Body of `POST /payments/`. */
export interface PaymentRequest {
  paymentIdentification: {
    /** The application's own id of the payment, at most 35 characters. */
    instructionIdentification: string
    /** SEPA end-to-end id (`NOTPROVIDED` allowed). */
    endToEndIdentification?: string
  }
  paymentTypeInformation?: { instructionPriority?: InstructionPriority }
  amount: { instructedAmount: Amount }
  /** YYYY-MM-DD; absent = as soon as possible. */
  requestedExecutionDate?: string
  debtorAccount: AccountReference
  creditorAccount: AccountReference
  creditorAgent?: FinancialInstitution
  creditor?: Party
  ultimateDebtor?: Party
  ultimateCreditor?: Party
  purpose?: { code?: string; proprietary?: string }
  chargeBearer?: 'OUR' | 'SHA' | 'BEN'
  remittanceInformation?: RemittanceInformation
}

/** ISO 20022 payment status codes the bank uses; unknown codes are possible and non-final. */
export type PaymentStatusCode = Open<'ACTC' | 'ACWC' | 'ACSP' | 'ACSC' | 'RJCT'>

export interface SignInfo {
  state?: string
  signId?: string
  signID?: string
  [key: string]: unknown
}

/** The bank's answer to create/read: the request echoed plus identifiers and status, as sent. */
export interface PaymentResponse {
  paymentIdentification?: {
    instructionIdentification?: string
    transactionIdentification?: string
    endToEndIdentification?: string
  }
  transaction?: { identification?: string }
  signInfo?: SignInfo
  instructionStatus?: PaymentStatusCode
  [key: string]: unknown
}

/** A created or read payment with its identifiers resolved from either spelling the bank uses. */
export interface Payment {
  /** `transaction.identification` or COBS `paymentIdentification.transactionIdentification`. */
  paymentId: string
  /** `signInfo.signID` or COBS `signInfo.signId`; undefined once signed (or when the bank sent none). */
  signId: string | undefined
  status: PaymentStatusCode | undefined
  /** The bank's body, unchanged. */
  raw: PaymentResponse
}

export interface PaymentStatus {
  instructionStatus: PaymentStatusCode
  [key: string]: unknown
}

/** Where to send the user to authorize a payment or standing order. */
export interface SignRedirect {
  /** The bank's authorization page. */
  url: string
  /** `GET` (plain redirect) or `POST` (auto-submit `formData`). */
  method: string
  formData: Record<string, string> | undefined
  raw: Record<string, unknown>
}

/** Final payment statuses; everything else (including unknown codes) is still in progress. */
export const FINAL_PAYMENT_STATUSES: ReadonlySet<string> = new Set(['ACSC', 'RJCT'])
