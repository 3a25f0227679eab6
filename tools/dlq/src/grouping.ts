import type { DlqEntry } from './dlq-entry.ts'
import type { Ledger } from './ledger.ts'

/** One line of `list`: the DLQ records of one reason, source topic and time bucket. */
export interface DlqGroup {
  reason: string
  sourceTopic: string
  /** Start of the bucket (ISO-8601, UTC). */
  bucket: string
  count: number
  /** Of `count`, how many the ledger says were re-driven. */
  redriven: number
  /** `partition:offset` of the first and last record of the group (by failure time). */
  first: string
  last: string
}

export const NO_SOURCE = '(unknown)'

/** Groups records by reason, source topic and `bucketMs`-wide window of their failure time; sorted that way. */
export function groupEntries(entries: readonly DlqEntry[], bucketMs: number, ledger: Ledger, dlqTopic: string): DlqGroup[] {
  const groups = new Map<string, DlqGroup & { firstAt: number; lastAt: number }>()
  for (const e of entries) {
    const start = Math.floor(e.failedAt / bucketMs) * bucketMs
    const sourceTopic = e.sourceTopic ?? NO_SOURCE
    const key = `${e.code}\u0000${sourceTopic}\u0000${start}`
    const redriven = ledger.redrivesOf(dlqTopic, e).length > 0 ? 1 : 0
    const g = groups.get(key)
    if (g === undefined) {
      groups.set(key, { reason: e.code, sourceTopic, bucket: new Date(start).toISOString(), count: 1, redriven, first: e.id, last: e.id, firstAt: e.failedAt, lastAt: e.failedAt })
      continue
    }
    g.count++
    g.redriven += redriven
    if (e.failedAt < g.firstAt) [g.first, g.firstAt] = [e.id, e.failedAt]
    if (e.failedAt >= g.lastAt) [g.last, g.lastAt] = [e.id, e.failedAt]
  }
  return [...groups.values()]
    .sort((a, b) => a.reason.localeCompare(b.reason) || a.sourceTopic.localeCompare(b.sourceTopic) || a.bucket.localeCompare(b.bucket))
    .map(({ firstAt: _f, lastAt: _l, ...g }) => g)
}

/** A plain text table: a header line and one line per row, columns padded; numbers right-aligned. */
export function formatTable(header: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const cells = [header, ...rows.map((r) => r.map(String))]
  const widths = header.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? '').length)))
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'))
  return cells
    .map((r) => r.map((c, i) => (numeric[i] ? String(c).padStart(widths[i]!) : String(c).padEnd(widths[i]!))).join('  ').trimEnd())
    .join('\n')
}

export function groupsTable(groups: readonly DlqGroup[]): string {
  if (groups.length === 0) return '(no DLQ records match)'
  const total = groups.reduce((n, g) => n + g.count, 0)
  const redriven = groups.reduce((n, g) => n + g.redriven, 0)
  return `${formatTable(
    ['REASON', 'SOURCE TOPIC', 'FROM (UTC)', 'COUNT', 'RE-DRIVEN', 'FIRST', 'LAST'],
    groups.map((g) => [g.reason, g.sourceTopic, g.bucket.replace('.000Z', 'Z'), g.count, g.redriven, g.first, g.last]),
  )}\n${total} record(s) in ${groups.length} group(s), ${redriven} re-driven`
}
