import { compareTopics, readCommitted, type CompareSummary } from '@tep/check-topics'
import { TOPICS } from '@tep/kafka'
import type { FaultSystem } from './system.ts'

/**
 * Reads the raw, enriched and DLQ topics with the independent read_committed
 * reader of @tep/check-topics and compares the raw records produced in
 * [from, to] (their outcomes looked up in the whole output).
 */
export async function checkWindow(system: FaultSystem, from: number, to: number): Promise<CompareSummary> {
  const records = await readCommitted({ brokers: system.stack.brokers, topics: [TOPICS.transactionsRaw, TOPICS.transactionsEnriched, TOPICS.transactionsDlq], timeoutMs: 600_000 })
  const text = (b: Buffer | null) => (b === null ? null : b.toString('utf8'))
  const keyed = (r: { key: Buffer | null; timestamp: number }) => ({ key: text(r.key), timestamp: r.timestamp })
  return compareTopics({
    raw: (records.get(TOPICS.transactionsRaw) ?? []).map(keyed),
    enriched: (records.get(TOPICS.transactionsEnriched) ?? []).map(keyed),
    dlq: (records.get(TOPICS.transactionsDlq) ?? []).map((r) => ({ ...keyed(r), code: r.headers.get('dlq.error.code') })),
    window: { from, to },
  })
}
