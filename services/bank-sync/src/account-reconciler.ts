import type { Transaction } from '@tep/bank-client'
import type { AccountSyncState, BankTransactionChangeType } from '@tep/schemas'
import { addDays, maxDate, seenHorizon } from './sync-window.ts'
import {
  entryDate,
  entryKey,
  entryStatus,
  fallbackFingerprint,
  type EntryKey,
} from './transaction-mapping.ts'

/** A pending entry not booked within this many days is taken as a hold that lapsed. */
export const PENDING_MAX_AGE_DAYS = 35

/** Upper bound of the seen set per account, whatever the window holds. */
export const MAX_SEEN_ENTRIES = 20_000

export interface ReconciledEntry {
  item: Transaction
  entry: EntryKey
  changeType: BankTransactionChangeType
  /** True for ADDED: one raw event per new transaction, never for a booking of a seen hold. */
  emitRaw: boolean
}

export interface Reconciliation {
  /** Oldest first, so downstream sees the account's history in order. */
  changes: ReconciledEntry[]
  state: AccountSyncState
  /** Entries read (after removing repeats inside this read). */
  read: number
  /** Seen entries dropped by the hard bound (should stay 0; a warning if not). */
  evicted: number
}

export function emptyAccountState(
  accountId: string,
  currency: string | null,
  overlapDays: number,
): AccountSyncState {
  return {
    accountId,
    currency,
    lastBookingDate: null,
    overlapDays,
    lastSyncedAt: null,
    pendingEntryReferences: [],
    seenEntries: [],
  }
}

/**
 * Compares one read of an account's history with what was already published.
 *
 * - an entry reference never seen → ADDED (+ one raw event); a pending one is remembered;
 * - a remembered pending entry now booked → MODIFIED, no new raw event;
 * - anything else seen before → nothing.
 * Twins (identical content, different entry references) are different entries.
 * The same reference twice in one read (pages shifting while new entries arrive)
 * counts once, the booked copy winning.
 */
export function reconcileAccount(
  previous: AccountSyncState,
  items: readonly Transaction[],
  options: { today: string; now: number },
): Reconciliation {
  const seen = new Map(previous.seenEntries.map((s) => [s.entryReference, s.date]))
  const pending = new Set(previous.pendingEntryReferences)

  const unique = new Map<string, { item: Transaction; entry: EntryKey }>()
  const fallbackCount = new Map<string, number>()
  // The bank sends newest first; walk oldest first so outputs are in history order.
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as Transaction
    let entry: EntryKey
    if (typeof item.entryReference === 'string' && item.entryReference !== '') entry = entryKey(item)
    else {
      const fp = fallbackFingerprint(item)
      const n = fallbackCount.get(fp) ?? 0
      fallbackCount.set(fp, n + 1)
      entry = entryKey(item, n)
    }
    const existing = unique.get(entry.entryReference)
    if (
      existing === undefined ||
      (entryStatus(existing.item) === 'PENDING' && entryStatus(item) === 'BOOKED')
    ) {
      unique.set(entry.entryReference, { item, entry })
    }
  }

  const changes: ReconciledEntry[] = []
  let watermark = previous.lastBookingDate
  for (const { item, entry } of unique.values()) {
    const ref = entry.entryReference
    const status = entryStatus(item)
    const date = entryDate(item) ?? options.today
    if (status === 'BOOKED') watermark = watermark === null ? date : maxDate(watermark, date)
    if (!seen.has(ref)) {
      changes.push({ item, entry, changeType: 'ADDED', emitRaw: true })
      seen.set(ref, date)
      if (status === 'PENDING') pending.add(ref)
    } else if (status === 'BOOKED' && pending.has(ref)) {
      changes.push({ item, entry, changeType: 'MODIFIED', emitRaw: false })
      pending.delete(ref)
      seen.set(ref, date)
    }
  }

  const lapse = addDays(options.today, -PENDING_MAX_AGE_DAYS)
  for (const ref of pending) {
    const date = seen.get(ref)
    if (date === undefined || date < lapse) pending.delete(ref)
  }
  const horizon = seenHorizon(watermark, previous.overlapDays, options.today)
  let kept = [...seen].filter(([ref, date]) => date >= horizon || pending.has(ref))
  let evicted = 0
  if (kept.length > MAX_SEEN_ENTRIES) {
    kept.sort((a, b) => (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : 0))
    evicted = kept.length - MAX_SEEN_ENTRIES
    kept = kept.slice(0, MAX_SEEN_ENTRIES)
  }
  const keptRefs = new Set(kept.map(([ref]) => ref))
  return {
    changes,
    read: unique.size,
    evicted,
    state: {
      ...previous,
      lastBookingDate: watermark,
      lastSyncedAt: options.now,
      pendingEntryReferences: [...pending].filter((ref) => keptRefs.has(ref)),
      seenEntries: kept.map(([entryReference, date]) => ({ entryReference, date })),
    },
  }
}
