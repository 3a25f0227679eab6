import type { Amount } from '../money.ts'
import type { AccountReference, Open, PageInfo, RemittanceInformation } from './common.ts'
import type { SignInfo } from './payments.ts'

export type StandingOrderInterval = 'WEEKLY' | 'MONTHLY' | 'QUARTERLY' | 'HALFYEARLY' | 'YEARLY'
export type StandingOrderMode = 'UNTIL_CANCELLATION' | 'UNTIL_DATE'
export type StandingOrderModeDue = 'DUE_DAY_OF_MONTH'

/**
 * Body of `POST /standingorders` and `PUT /standingorders/{id}`. The COBS fields the bank
 * ignores are typed too, so that callers porting COBS code compile; `prepareStandingOrder`
 * decides what happens to them.
 */
export interface StandingOrderRequest {
  standingOrderIdentification: { instructionIdentification: string }
  amount: { instructedAmount: Amount }
  /** First execution, YYYY-MM-DD. */
  requestedExecutionDate: string
  standingOrder: {
    alias?: string
    execution: {
      interval: Open<StandingOrderInterval>
      intervalDue?: number | string
      mode: Open<StandingOrderMode>
      modeDue?: Open<StandingOrderModeDue>
    }
    exceptions?: {
      breaks?: Array<{ validFromDate: string; validToDate: string }>
      stoppages?: Array<number | string>
      /** Spelling of the COBS v8 OpenAPI. */
      stopages?: Array<number | string>
    }
    validity?: {
      lastExecutionDate?: string
      maxIterations?: number
      maxAmount?: Amount
    }
  }
  debtorAccount: AccountReference
  creditorAccount: AccountReference
  remittanceInformation?: RemittanceInformation
}

export interface StandingOrderResponse {
  standingOrderIdentification?: { instructionIdentification?: string; transactionIdentification?: string }
  transaction?: { identification?: string }
  signInfo?: SignInfo
  instructionStatus?: string
  [key: string]: unknown
}

/** A created, read or changed standing order with its identifiers resolved. */
export interface StandingOrder {
  standingOrderId: string
  signId: string | undefined
  status: string | undefined
  raw: StandingOrderResponse
}

export interface StandingOrderStatus {
  instructionStatus: string
  realizedPayments: Array<{ transactionIdentification: string; date: string; [key: string]: unknown }>
  [key: string]: unknown
}

/** An item of `GET /standingorders` (accounts interface). */
export interface StandingOrderListItem {
  standingOrderIdentification?: { instructionIdentification?: string; transactionIdentification?: string }
  amount?: { instructedAmount?: Amount }
  standingOrder?: Record<string, unknown>
  debtorAccount?: AccountReference
  [key: string]: unknown
}

export interface StandingOrdersPage extends PageInfo {
  standingOrders: StandingOrderListItem[]
}
