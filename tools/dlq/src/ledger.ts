import { maskPansInText } from '@tep/observability'
import { dlqPosition, type DlqEntry } from './dlq-entry.ts'

/**
 * The audit record of one re-drive transaction, the value (JSON) of a record of
 * the ledger topic keyed by the re-drive id. It is written in the same Kafka
 * transaction as the records it lists, so the ledger says exactly what was
 * re-driven: a record is on its source topic again if and only if an audit
 * record names it.
 */
export interface RedriveAudit {
  kind: 'tep.dlq.redrive'
  version: 1
  redriveId: string
  /** This transaction's part of the run (1-based) and how many the run planned. */
  part: number
  parts: number
  operator: string
  /** ISO-8601 time the part was written. */
  at: string
  note: string | null
  /** True when records already re-driven were re-driven again on purpose (--force-again). */
  forceAgain: boolean
  dlqTopic: string
  /** The options that selected the records, as given. */
  selection: Record<string, unknown>
  records: AuditedRecord[]
}

export interface AuditedRecord {
  /** `partition:offset` on the DLQ topic. */
  dlq: string
  code: string
  sourceTopic: string
  sourcePartition: number | null
  sourceOffset: string | null
  /** The record key as text, card numbers masked. */
  key: string | null
}

export function auditedRecord(entry: DlqEntry): AuditedRecord {
  return {
    dlq: entry.id,
    code: entry.code,
    sourceTopic: entry.sourceTopic ?? '',
    sourcePartition: entry.sourcePartition ?? null,
    sourceOffset: entry.sourceOffset ?? null,
    key: entry.key === null ? null : maskPansInText(entry.key.toString('utf8')),
  }
}

/** An earlier re-drive of one DLQ record, as the ledger remembers it. */
export interface LedgerRef {
  redriveId: string
  operator: string
  at: string
  forceAgain: boolean
}

/** Every DLQ position the ledger names, with the re-drives that named it (oldest first). */
export class Ledger {
  readonly #byPosition = new Map<string, LedgerRef[]>()
  #audits = 0
  #skipped = 0

  /** Adds one ledger record's value; a value that is not an audit record is counted and left out. */
  add(value: Buffer | null): void {
    let audit: RedriveAudit
    try {
      audit = JSON.parse(value?.toString('utf8') ?? 'null') as RedriveAudit
    } catch {
      this.#skipped++
      return
    }
    if (audit?.kind !== 'tep.dlq.redrive' || !Array.isArray(audit.records)) {
      this.#skipped++
      return
    }
    this.#audits++
    const ref: LedgerRef = { redriveId: audit.redriveId, operator: audit.operator, at: audit.at, forceAgain: audit.forceAgain }
    for (const r of audit.records) {
      const position = `${audit.dlqTopic}/${r.dlq.replace(':', '/')}`
      const refs = this.#byPosition.get(position)
      if (refs === undefined) this.#byPosition.set(position, [ref])
      else refs.push(ref)
    }
  }

  /** The earlier re-drives of `entry` of `dlqTopic`; empty when it never was re-driven. */
  redrivesOf(dlqTopic: string, entry: Pick<DlqEntry, 'partition' | 'offset'>): readonly LedgerRef[] {
    return this.#byPosition.get(dlqPosition(dlqTopic, entry)) ?? []
  }

  get audits(): number {
    return this.#audits
  }

  /** Ledger records that were not audit records of this tool (left out). */
  get skipped(): number {
    return this.#skipped
  }
}
