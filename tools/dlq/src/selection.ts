import type { DlqEntry } from './dlq-entry.ts'
import { DlqSelectionError, RedriveRefusedError } from './errors.ts'
import type { Ledger, LedgerRef } from './ledger.ts'

/** What an operator selects DLQ records by (all given criteria must hold). */
export interface Filter {
  /** dlq.error.code values. */
  reasons?: readonly string[]
  /** failedAt at or after (epoch ms). */
  since?: number
  /** failedAt at or before (epoch ms). */
  until?: number
  sourceTopics?: readonly string[]
  /** `partition:offset` ids. */
  ids?: readonly string[]
}

export function matches(entry: DlqEntry, filter: Filter): boolean {
  if (filter.reasons !== undefined && !filter.reasons.includes(entry.code)) return false
  if (filter.since !== undefined && entry.failedAt < filter.since) return false
  if (filter.until !== undefined && entry.failedAt > filter.until) return false
  if (filter.sourceTopics !== undefined && (entry.sourceTopic === undefined || !filter.sourceTopics.includes(entry.sourceTopic))) return false
  if (filter.ids !== undefined && !filter.ids.includes(entry.id)) return false
  return true
}

/** Counts per code of `entries`, most frequent first, for messages. */
export function reasonsPresent(entries: readonly DlqEntry[]): string {
  const counts = new Map<string, number>()
  for (const e of entries) counts.set(e.code, (counts.get(e.code) ?? 0) + 1)
  if (counts.size === 0) return 'none (the DLQ is empty)'
  return [...counts].sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} (${n})`).join(', ')
}

/**
 * Refuses a filter that names something the DLQ does not hold: a reason code
 * no record carries (a typo would otherwise select nothing, silently) or an id
 * that is not a DLQ record.
 */
export function checkFilter(all: readonly DlqEntry[], filter: Filter): void {
  const codes = new Set(all.map((e) => e.code))
  const unknown = (filter.reasons ?? []).filter((r) => !codes.has(r))
  if (unknown.length > 0) {
    throw new DlqSelectionError(
      `no DLQ record has the reason ${unknown.join(', ')}; reasons on the DLQ: ${reasonsPresent(all)}`,
      { unknownReasons: unknown },
    )
  }
  const ids = new Set(all.map((e) => e.id))
  const missing = (filter.ids ?? []).filter((id) => !ids.has(id))
  if (missing.length > 0) {
    throw new DlqSelectionError(
      `no DLQ record at ${missing.join(', ')} (ids are partition:offset, as list --json and show print them; records past the DLQ's retention are gone)`,
      { missingIds: missing },
    )
  }
}

export interface RedriveSelection {
  /** What will be re-driven, oldest failure first, at most the budget. */
  selected: DlqEntry[]
  /** Records the filter matched. */
  matched: number
  /** Matched, left out because the ledger says they were re-driven (without --force-again). */
  alreadyRedriven: Array<{ entry: DlqEntry; redrives: readonly LedgerRef[] }>
  /** Matched, left out because masking altered their bytes when they were dead-lettered. */
  masked: DlqEntry[]
  /** Matched, left out because they have no dlq.source.topic header (nowhere to send them). */
  noSource: DlqEntry[]
  /** Matched and re-drivable, left out by the --max budget. */
  overBudget: number
}

export interface SelectOptions {
  dlqTopic: string
  filter: Filter
  ledger: Ledger
  /** Most records to re-drive; undefined: all. */
  max?: number
  forceAgain: boolean
}

const describeRedrive = (r: LedgerRef) => `redrive ${r.redriveId} by ${r.operator} at ${r.at}`

/**
 * Picks the records to re-drive and applies the guard. A record the ledger
 * names is left out of a filter's selection (re-running a command re-drives
 * only what is new); naming it by id, or a selection made of nothing else, is
 * refused: a second re-drive of the same record needs --force-again, which is
 * itself audited.
 */
export function selectForRedrive(all: readonly DlqEntry[], options: SelectOptions): RedriveSelection {
  checkFilter(all, options.filter)
  const matched = all.filter((e) => matches(e, options.filter))
  const out: RedriveSelection = { selected: [], matched: matched.length, alreadyRedriven: [], masked: [], noSource: [], overBudget: 0 }
  const candidates: DlqEntry[] = []
  for (const entry of matched) {
    if (entry.sourceTopic === undefined || entry.sourceTopic === '') out.noSource.push(entry)
    else if (entry.maskedPans > 0) out.masked.push(entry)
    else {
      const redrives = options.ledger.redrivesOf(options.dlqTopic, entry)
      if (redrives.length > 0 && !options.forceAgain) out.alreadyRedriven.push({ entry, redrives })
      else candidates.push(entry)
    }
  }
  const named = new Set(options.filter.ids ?? [])
  const namedAgain = out.alreadyRedriven.filter((a) => named.has(a.entry.id))
  if (namedAgain.length > 0 || (candidates.length === 0 && out.alreadyRedriven.length > 0)) {
    const refused = namedAgain.length > 0 ? namedAgain : out.alreadyRedriven
    const shown = refused.slice(0, 5).map((a) => `${a.entry.id} (${describeRedrive(a.redrives.at(-1)!)})`)
    throw new RedriveRefusedError(
      `refused: ${refused.length} selected DLQ record(s) were re-driven before: ${shown.join('; ')}${refused.length > 5 ? '; ...' : ''}. ` +
        'A record is re-driven once; to re-drive it again on purpose, add --force-again (recorded in the audit ledger).',
      { refused: refused.map((a) => a.entry.id) },
    )
  }
  if (candidates.length === 0) {
    const why = [
      out.masked.length > 0 ? `${out.masked.length} had card numbers masked when they were dead-lettered (their bytes are not the original ones; have the source publish them again)` : '',
      out.noSource.length > 0 ? `${out.noSource.length} have no dlq.source.topic header` : '',
    ].filter(Boolean)
    throw new DlqSelectionError(
      matched.length === 0
        ? `the selection matches no DLQ record (${all.length} on the DLQ; reasons: ${reasonsPresent(all)})`
        : `nothing to re-drive: of ${matched.length} matching record(s), ${why.join('; ')}`,
      { matched: matched.length },
    )
  }
  candidates.sort((a, b) => a.failedAt - b.failedAt || a.partition - b.partition || (BigInt(a.offset) < BigInt(b.offset) ? -1 : 1))
  const max = options.max ?? candidates.length
  out.selected = candidates.slice(0, max)
  out.overBudget = candidates.length - out.selected.length
  return out
}
