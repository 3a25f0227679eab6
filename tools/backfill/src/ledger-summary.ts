import { rename, writeFile } from 'node:fs/promises'
import type { LedgerEntry } from './backfill-topics.ts'

/** What the ledger says a backfill did: one outcome per row (the latest entry of a row wins). */
export function summarise(ledger: LedgerEntry[]) {
  const byRow = new Map<string, LedgerEntry>()
  for (const e of ledger) byRow.set(e.row, e)
  const enriched = { matched: 0, notFound: 0, rejectedByApi: 0 }
  const rejectsByCode: Record<string, number> = {}
  let rejected = 0
  for (const e of byRow.values()) {
    if (e.outcome === 'MATCHED') enriched.matched += 1
    else if (e.outcome === 'NOT_FOUND') enriched.notFound += 1
    else if (e.outcome === 'REJECTED') enriched.rejectedByApi += 1
    else {
      rejected += 1
      const code = e.code ?? 'UNKNOWN'
      rejectsByCode[code] = (rejectsByCode[code] ?? 0) + 1
    }
  }
  return { distinct: byRow.size, enriched, rejected, rejectsByCode }
}

/**
 * Per input partition, the offset of the last row a topic backfill's ledger holds. The ledger is
 * written in the same transaction as the group's offsets, so it shows the same progress, and still
 * does when those offsets expired.
 */
export function lastRowOffsets(ledger: readonly LedgerEntry[]): Map<number, bigint> {
  const last = new Map<number, bigint>()
  for (const { row } of ledger) {
    const colon = row.indexOf(':')
    if (colon < 0) continue
    const partition = Number(row.slice(0, colon))
    const offset = BigInt(row.slice(colon + 1))
    if (offset > (last.get(partition) ?? -1n)) last.set(partition, offset)
  }
  return last
}

/** Where a partition is read from when its group has no committed offset: its range start, or after its last ledger row. */
export function resumeOffset(rangeStart: bigint, lastRow: bigint | undefined): bigint {
  return lastRow === undefined || lastRow < rangeStart ? rangeStart : lastRow + 1n
}

/** The rejects file, rewritten whole from the ledger (so a resumed run never doubles a line). */
export async function writeRejects(path: string, ledger: LedgerEntry[], byLine: boolean): Promise<void> {
  const rejects = ledger.filter((e) => e.outcome === 'INVALID')
  if (byLine) rejects.sort((a, b) => Number(a.row) - Number(b.row))
  const text = rejects
    .map((e) =>
      JSON.stringify({
        ...(byLine ? { line: Number(e.row) } : { record: e.row }),
        code: e.code,
        reason: e.reason,
        transactionId: e.transactionId,
      }),
    )
    .join('\n')
  const tmp = `${path}.tmp-${process.pid}`
  await writeFile(tmp, `${text}\n`)
  await rename(tmp, path)
}
