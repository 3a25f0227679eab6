import type { DlqEntry } from './dlq-entry.ts'
import { Ledger, type RedriveAudit } from './ledger.ts'

/** A DLQ entry for unit tests: partition 0, failed at `failedAt`, from transactions.raw.v1. */
export function entry(offset: number, code: string, failedAt: number, over: Partial<DlqEntry> = {}): DlqEntry {
  return {
    partition: 0,
    offset: String(offset),
    id: `${over.partition ?? 0}:${offset}`,
    timestamp: failedAt,
    failedAt,
    code,
    message: `failed with ${code}`,
    sourceTopic: 'transactions.raw.v1',
    sourcePartition: 1,
    sourceOffset: String(100 + offset),
    maskedPans: 0,
    key: Buffer.from(`tx-${offset}`),
    value: Buffer.from(`value-${offset}`),
    headers: {},
    ...over,
  }
}

/** A ledger that says `ids` of `dlqTopic` were re-driven by one run. */
export function ledgerWith(dlqTopic: string, ids: string[], redriveId = 'redrive-1'): Ledger {
  const ledger = new Ledger()
  const audit: RedriveAudit = {
    kind: 'tep.dlq.redrive',
    version: 1,
    redriveId,
    part: 1,
    parts: 1,
    operator: 'alice',
    at: '2026-11-28T10:00:00.000Z',
    note: 'shop table fixed',
    forceAgain: false,
    dlqTopic,
    selection: {},
    records: ids.map((dlq) => ({ dlq, code: 'X', sourceTopic: 'transactions.raw.v1', sourcePartition: 0, sourceOffset: '1', key: null })),
  }
  ledger.add(Buffer.from(JSON.stringify(audit)))
  return ledger
}
