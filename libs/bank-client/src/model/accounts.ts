import type { Amount } from '../money.ts'
import type { Open, PageInfo } from './common.ts'

export interface Account {
  /** Opaque id for paths. It may change at a real bank: key accounts on the IBAN. */
  id: string
  identification: { iban: string; other?: string }
  currency: string
  servicer?: { bankCode?: string; countryCode?: string; bic?: string }
  nameI18N?: string
  productI18N?: string
  /** `CACC` current account, `CARD` credit-card account (simulator extension). */
  cashAccountType?: Open<'CACC' | 'CARD'>
  [key: string]: unknown
}

export interface AccountsPage extends PageInfo {
  accounts: Account[]
}

/** Balance type codes: CLBD booked, PRCD previous-day booked, CLAV available, ITBD interim; others possible. */
export type BalanceCode = Open<'CLBD' | 'PRCD' | 'CLAV' | 'ITBD'>

export interface Balance {
  type: { codeOrProprietary: { code: BalanceCode } }
  amount: Amount
  creditDebitIndicator: Open<'CRDT' | 'DBIT'>
  creditLine?: { included: boolean; amount?: Amount }
  date?: { dateTime?: string; date?: string }
  [key: string]: unknown
}

export interface AccountBalance extends Partial<Account> {
  balances: Balance[]
}

export interface Transaction {
  /** The bank's id of the entry; stays the same when a pending item books. */
  entryReference?: string
  amount: Amount
  creditDebitIndicator: Open<'CRDT' | 'DBIT'>
  reversalIndicator?: boolean
  status: Open<'BOOK' | 'PDNG'>
  bookingDate?: { date?: string; dateTime?: string }
  valueDate?: { date?: string; dateTime?: string }
  bankTransactionCode?: { proprietary?: { code?: string; issuer?: string } }
  entryDetails?: { transactionDetails?: Record<string, unknown>; [key: string]: unknown }
  [key: string]: unknown
}

export interface TransactionPage extends PageInfo {
  transactions: Transaction[]
}

export interface TransactionQuery {
  /** 10 to 100 (the bank's limits). Default 100. */
  pageSize?: number
  /** YYYY-MM-DD, inclusive, bank's local date. More than 90 days back needs a fresh token. */
  dateFrom?: string
  /** 0-based. */
  page?: number
}
