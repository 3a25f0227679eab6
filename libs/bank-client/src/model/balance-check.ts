import type { Open } from './common.ts'

/** Body of `POST /accounts/balanceCheck` (cards) and `POST /payments/balanceCheck`. */
export interface BalanceCheckRequest {
  /** The application's id of this check, at most 18 characters. */
  exchangeIdentification: string | number
  card?: { cardholderName?: string; maskedPan?: string }
  debtorAccount: { identification: { iban: string }; currency?: string }
  authenticationMethod?: string
  merchant?: {
    identification?: string
    type?: string
    shortName?: string
    commonName?: string
    address?: string
    countryCode?: string
    merchantCategoryCode?: string
  }
  /** The amount to confirm; a decimal string is best ("129.90"). */
  transactionDetails: { currency: string; totalAmount: string | number }
}

/** `APPR` the balance suffices, `DECL` it does not. */
export type BalanceCheckAnswer = 'APPR' | 'DECL'

export interface BalanceCheckResponse {
  responseIdentification?: string
  exchangeIdentification?: string | number
  response: Open<BalanceCheckAnswer>
}
