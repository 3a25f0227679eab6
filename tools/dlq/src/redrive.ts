import { randomUUID } from 'node:crypto'
import { createTransactionalWriter, ensureTopics, topicSpec, TOPICS, type Kafka, type OutgoingMessage } from '@tep/kafka'
import { redriveHeaders, type DlqEntry } from './dlq-entry.ts'
import { RedriveIncompleteError } from './errors.ts'
import { auditedRecord, type RedriveAudit } from './ledger.ts'

export interface RedriveRun {
  kafka: Kafka
  dlqTopic: string
  auditTopic: string
  /** Already selected and guarded (selectForRedrive), in the order to re-drive. */
  records: readonly DlqEntry[]
  operator: string
  note: string | null
  forceAgain: boolean
  /** The options that selected the records, for the audit record. */
  selection: Record<string, unknown>
  /** Records (and one audit record) per Kafka transaction. */
  perTransaction: number
  onProgress?: (line: string) => void
  redriveId?: string
}

export interface RedriveResult {
  redriveId: string
  redriven: number
  transactions: number
  bySourceTopic: Record<string, number>
}

/**
 * The transactional id of the re-drive writer of one DLQ topic. Fixed, so that
 * two operators re-driving at once fence each other: the later InitProducerId
 * aborts the earlier run's open transaction and its next commit fails, and the
 * ledger is read only after this writer holds the id (see redrive's guard).
 */
export const redriveTransactionalId = (dlqTopic: string) => `tep-dlq-redrive.${dlqTopic}`

/**
 * Takes the re-drive writer of `dlqTopic` over and makes sure the ledger topic
 * exists; call before reading the ledger, so that no other run can commit
 * between the read and this run's writes.
 */
export async function claimRedrive(kafka: Kafka, dlqTopic: string, auditTopic: string) {
  const spec = topicSpec(TOPICS.transactionsDlqRedrives)
  await ensureTopics(kafka, [{ ...spec, name: auditTopic }])
  const writer = createTransactionalWriter(kafka, { transactionalId: redriveTransactionalId(dlqTopic) })
  await writer.start()
  return writer
}

type Writer = Awaited<ReturnType<typeof claimRedrive>>

/**
 * Writes the records back to their source topics, `perTransaction` at a time,
 * each chunk in one Kafka transaction with its audit record on the ledger: a
 * record is re-driven and audited, or neither. A failure aborts the chunk in
 * flight and stops with RedriveIncompleteError saying how far it got.
 */
export async function redrive(writer: Writer, run: RedriveRun): Promise<RedriveResult> {
  const redriveId = run.redriveId ?? `redrive-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${randomUUID().slice(0, 8)}`
  const parts = Math.ceil(run.records.length / run.perTransaction)
  const result: RedriveResult = { redriveId, redriven: 0, transactions: 0, bySourceTopic: {} }
  for (let part = 1; part <= parts; part++) {
    const chunk = run.records.slice((part - 1) * run.perTransaction, part * run.perTransaction)
    const bySource = new Map<string, OutgoingMessage[]>()
    for (const e of chunk) {
      const messages = bySource.get(e.sourceTopic!) ?? []
      messages.push({ key: e.key, value: e.value, headers: redriveHeaders(run.dlqTopic, e, redriveId) })
      bySource.set(e.sourceTopic!, messages)
    }
    const audit: RedriveAudit = {
      kind: 'tep.dlq.redrive',
      version: 1,
      redriveId,
      part,
      parts,
      operator: run.operator,
      at: new Date().toISOString(),
      note: run.note,
      forceAgain: run.forceAgain,
      dlqTopic: run.dlqTopic,
      selection: run.selection,
      records: chunk.map(auditedRecord),
    }
    try {
      await writer.run(async (tx) => {
        for (const [topic, messages] of bySource) await tx.send(topic, messages)
        await tx.send(run.auditTopic, [{ key: redriveId, value: Buffer.from(JSON.stringify(audit)) }])
      })
    } catch (err) {
      throw new RedriveIncompleteError(
        `re-drive ${redriveId} stopped after ${result.redriven} of ${run.records.length} record(s) (${result.transactions} of ${parts} transaction(s) committed, each with its audit record); ` +
          `the transaction of the next ${chunk.length} was aborted: ${(err as Error).message}. Nothing else was written: run the same command again to re-drive the rest (the ledger leaves out what is done).`,
        { cause: err, details: { redriveId, redriven: result.redriven, selected: run.records.length } },
      )
    }
    result.redriven += chunk.length
    result.transactions++
    for (const [topic, messages] of bySource) result.bySourceTopic[topic] = (result.bySourceTopic[topic] ?? 0) + messages.length
    run.onProgress?.(`re-drove ${result.redriven} of ${run.records.length} record(s) (transaction ${part} of ${parts} committed with its audit record)`)
  }
  return result
}
