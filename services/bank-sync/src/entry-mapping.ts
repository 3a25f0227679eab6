import type { Transaction } from '@tep/bank-client'
import { rawTransactionProblems, type BankTransaction, type RawTransaction } from '@tep/schemas'
import type { BankSyncMetrics } from './metrics.ts'
import type { SyncLogger } from './sync-deps.ts'
import { toBankTransaction, toRawTransaction, type EntryContext } from './transaction-mapping.ts'

/**
 * Maps one bank entry, isolating it: an entry the mapping cannot read (no
 * amount, an unknown shape) is skipped, and a raw event that breaks the
 * RawTransaction rules (a 20 kB remittance text, a currency outside ISO 4217)
 * is not handed to enrichment. Each is counted (`bank_sync_malformed_entries_total`)
 * and logged as an event naming the entry and the reason, never its content,
 * and the sync goes on: one bad entry must not stop its consent's sync forever.
 * The entry still counts as seen, so it is not retried on every sync; a
 * corrected version from the bank arrives as a change like any other.
 */
export function mapEntry(
  item: Transaction,
  ctx: EntryContext,
  changeType: BankTransaction['changeType'],
  emitRaw: boolean,
  deps: { metrics: BankSyncMetrics; logger: SyncLogger },
): { bankTransaction?: BankTransaction; rawTransaction?: RawTransaction } {
  const where = { consentId: ctx.consentId, accountId: ctx.accountId, entryReference: ctx.entry.entryReference }
  let bankTransaction: BankTransaction
  let rawTransaction: RawTransaction | undefined
  try {
    bankTransaction = toBankTransaction(item, ctx, changeType)
    rawTransaction = emitRaw ? toRawTransaction(item, ctx) : undefined
  } catch (err) {
    deps.metrics.malformedEntries.inc({ reason: 'UNREADABLE' })
    deps.logger.warn(
      { ...where, reason: 'UNREADABLE', error: err instanceof Error ? err.message.slice(0, 200) : String(err) },
      'bank entry skipped: it cannot be mapped (malformed at the bank); the sync goes on',
    )
    return {}
  }
  if (rawTransaction === undefined) return { bankTransaction }
  const problems = rawTransactionProblems(rawTransaction)
  if (problems.length > 0) {
    deps.metrics.malformedEntries.inc({ reason: 'RAW_RULES' })
    deps.logger.warn(
      { ...where, reason: 'RAW_RULES', problems },
      'bank entry recorded but not sent to enrichment: it breaks the RawTransaction rules; the sync goes on',
    )
    return { bankTransaction }
  }
  return { bankTransaction, rawTransaction }
}
