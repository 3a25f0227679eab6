import type { Remittance } from '../data/ledger-entry.ts'
import type { ResolvedCreditor } from '../payments/creditor.ts'
import type { Schedule } from './schedule.ts'

/*
 * A standing order as the simulated bank keeps it: its terms, the segments of
 * terms in force over time, and its signing round. The service that manages
 * orders (standing-order-service.ts) and the generator of the bank's own orders
 * (bank-standing-orders.ts) both build on these types; the generator no longer
 * imports the service, which imports it.
 */

export interface StandingOrderTerms {
  instructionId?: string
  amountMinor: number
  currency: string
  schedule: Schedule
  creditor: ResolvedCreditor
  creditorName?: string
  remittance?: Remittance
  echo: Record<string, unknown>
}

/** Terms in force from an instant on (a change authorized later starts a new segment). */
export interface Segment {
  from: number
  terms: StandingOrderTerms
}

export type StandingOrderStatus = 'ACTC' | 'ACSP' | 'ACSC' | 'RJCT' | 'CANC'

export interface StandingOrder {
  id: string
  userId: string
  debtorAccountId: string
  /** Created through the API by this client; undefined for the bank's own (generated) orders. */
  clientId?: string
  createdAt: number
  /** Terms waiting for the first authorization. */
  draft?: StandingOrderTerms
  segments: Segment[]
  rejected?: boolean
  deletedAt?: number
  signing?: { signId: string; state: 'OPEN' | 'DONE' | 'CANCELED'; kind: 'CREATE' | 'UPDATE' | 'DELETE'; pendingTerms?: StandingOrderTerms }
}
