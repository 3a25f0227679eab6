import type { Consent } from '@tep/schemas'

export type ConsentStatus = Consent['status']

/**
 * Statuses a consent never leaves: the customer ended it, the bank revoked it, or
 * the 90-day accounts consent ran out. A new consent gets a new consentId.
 */
export const TERMINAL_STATUSES: ReadonlySet<ConsentStatus> = new Set(['ENDED', 'REVOKED', 'EXPIRED'])

/** Statuses whose consents are synced. */
export const SYNCING_STATUSES: ReadonlySet<ConsentStatus> = new Set(['ACTIVE', 'EXPIRING'])

export function isTerminal(status: ConsentStatus): boolean {
  return TERMINAL_STATUSES.has(status)
}

export type ConsentRecordDecision =
  /** Take the record as the consent's new state. */
  | { action: 'apply' }
  /** Keep the current state (an older version, or a non-terminal write after a terminal one). */
  | { action: 'ignore' }
  /**
   * A non-terminal record landed in the log AFTER a terminal one (two writers raced):
   * keep the terminal state and write it again, so the compacted topic ends terminal too.
   */
  | { action: 'reassert'; terminal: Consent }
  /**
   * The record names another customer than the consent has: a consent never changes customer
   * (a new customer consents under a new consentId), so this is a forged re-assignment. Keep
   * the current state; the tokens' binding to the customer refuses it too where the original
   * record is not known (docs/security.md).
   */
  | { action: 'refuse'; reason: 'CUSTOMER_CHANGED' }

/**
 * How a record read from `bank.consents.v1` changes the in-memory state of its
 * consent. Records arrive in log order. Terminal states win over everything that
 * follows them; otherwise the higher (or equal: our own echo) version wins, so an
 * echo of an older write of ours never rolls the state back.
 */
export function decideConsentRecord(current: Consent | undefined, incoming: Consent): ConsentRecordDecision {
  if (current === undefined) return { action: 'apply' }
  if (incoming.customerId !== current.customerId) return { action: 'refuse', reason: 'CUSTOMER_CHANGED' }
  if (isTerminal(current.status)) {
    if (isTerminal(incoming.status))
      return incoming.version >= current.version ? { action: 'apply' } : { action: 'ignore' }
    return { action: 'reassert', terminal: current }
  }
  if (isTerminal(incoming.status)) return { action: 'apply' }
  return incoming.version >= current.version ? { action: 'apply' } : { action: 'ignore' }
}
