import type { CardShop } from './merchant-source.ts'

/** The other side of a transfer as it appears in the history. */
export interface Counterparty {
  name?: string
  iban?: string
  /** Czech national number parts when the account is Czech. */
  prefix?: string
  number?: string
  bankCode?: string
  bic?: string
  townName?: string
  country?: string
}

export interface Remittance {
  message?: string
  vs?: string
  ss?: string
  ks?: string
}

export interface CardDetails {
  shop: CardShop
  maskedPan: string
  scheme: 'VISA' | 'MASTERCARD'
  /** Set when the shop charged another currency than the account's. */
  original?: { amountMinor: number; currency: string; rate: number }
}

/**
 * Bank transaction codes of the simulator (issuer `CBA`). ASSUMPTION: a small
 * list modelled on the ČBA code structure; the real list is longer.
 */
export const TX_CODES = {
  transfer: '10000101000',
  standingOrder: '10000105000',
  instantTransfer: '10000107000',
  cardPayment: '30000301000',
  cashWithdrawal: '30000302000',
  fee: '50000501000',
  interest: '60000601000',
} as const

/**
 * One entry of an account's history, in the simulator's own terms. A card payment
 * is pending from `at` (the authorization) until `bookAt` and booked afterwards,
 * with the same entry reference in both states.
 */
export interface LedgerEntry {
  entryReference: string
  accountId: string
  at: number
  bookAt: number
  /** Booked amount. */
  amountMinor: number
  /**
   * Amount while pending, when it differs from the booked one: a card payment in
   * another currency is held at the rate of the authorization and booked at the
   * rate of the clearing day.
   */
  holdAmountMinor?: number
  /** A hold the merchant released: pending until then, afterwards gone without booking. */
  releasedAt?: number
  currency: string
  direction: 'CRDT' | 'DBIT'
  code: string
  counterparty?: Counterparty
  remittance?: Remittance
  card?: CardDetails
  endToEndId?: string
  instructionId?: string
  additionalInfo?: string
}

/** The amount shown and counted at `now`: the hold amount while pending, the booked one afterwards. */
export function amountAt(entry: LedgerEntry, now: number): number {
  return entry.bookAt <= now ? entry.amountMinor : (entry.holdAmountMinor ?? entry.amountMinor)
}

/** Signed effect on the balance. */
export function signedMinor(entry: LedgerEntry): number {
  return entry.direction === 'CRDT' ? entry.amountMinor : -entry.amountMinor
}
