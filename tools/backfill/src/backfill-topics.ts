import { createKafkaAdmin, ensureTopics, scanTopic, type Kafka, type OutgoingMessage, type TopicSpec } from '@tep/kafka'
import type { RetentionGap } from './errors.ts'

/**
 * Topics of the backfill tool. Their values are JSON (internal bookkeeping,
 * never read by other services), so they have no Avro schema.
 *
 * - `backfill.state.v1` (compacted, 1 partition, key = backfill id): where a
 *   backfill is, written in the same Kafka transaction as the rows it describes.
 * - `backfill.<id>.rows`: the rows of an input file, keyed by line number,
 *   written by the loader; the enrichment step consumes it exactly once.
 * - `backfill.<id>.ledger`: one entry per processed row (its outcome or why it
 *   was rejected), written in the enrichment step's transaction with the enriched
 *   record; the rejects file and the final report are built from it.
 */
export const STATE_TOPIC = 'backfill.state.v1'

export interface BackfillTopics {
  state: string
  rows: string
  ledger: string
  /** Required by the pipeline; stays empty (row failures are ledger entries). */
  dlq: string
}

export function backfillTopics(backfillId: string, stateTopic = STATE_TOPIC): BackfillTopics {
  return {
    state: stateTopic,
    rows: `backfill.${backfillId}.rows`,
    ledger: `backfill.${backfillId}.ledger`,
    dlq: `backfill.${backfillId}.dlq`,
  }
}

/** One partition's share of a `--from/--to` range: offsets [start, end). */
export interface PartitionRange {
  partition: number
  start: string
  end: string
}

export interface BackfillState {
  backfillId: string
  kind: 'file' | 'topic'
  /** File base name, or topic@from..to. */
  source: string
  /** SHA-256 of the file, or of "topic|from|to". */
  sha256: string
  /** File: last line loaded into the rows topic (the loader's cursor). */
  loadedThroughLine: number
  /** Rows in the rows topic (file) or records in the range (topic, once known). */
  loadedRows: number
  loadComplete: boolean
  /** Topic source: the range, per partition, [start, end). */
  ranges?: PartitionRange[]
  /**
   * Topic source: partitions whose range may have started among records retention removed, and
   * records retention removed before a resumed run read them (both accepted with --accept-retention-gap).
   */
  retentionGaps?: RetentionGap[]
  startedAt: number
  finishedAt: number | null
}

const DAY_MS = 86_400_000

export async function ensureBackfillTopics(
  kafka: Kafka,
  topics: BackfillTopics,
  partitions: number,
  withRows: boolean,
): Promise<void> {
  const spec = (name: string, description: string): TopicSpec => ({
    name,
    partitions,
    cleanupPolicy: 'delete',
    valueSchema: null,
    key: 'row',
    // Kept for a month: long enough to re-run or audit, then gone on its own.
    configs: { 'retention.ms': String(30 * DAY_MS) },
    description,
  })
  const specs: TopicSpec[] = [
    {
      name: topics.state,
      partitions: 1,
      cleanupPolicy: 'compact',
      valueSchema: null,
      key: 'backfill id',
      configs: { 'min.cleanable.dirty.ratio': '0.1', 'segment.ms': String(3_600_000) },
      description: 'Backfill runs and their loading cursors.',
    },
    spec(topics.ledger, 'Outcome of every processed backfill row.'),
    spec(topics.dlq, 'Unused by design: row failures are ledger entries.'),
  ]
  if (withRows) specs.push(spec(topics.rows, 'Rows of a backfill input file, keyed by line.'))
  await ensureTopics(kafka, specs)
}

/** Every backfill's latest state (read committed), by id. */
export async function readStates(kafka: Kafka, stateTopic: string): Promise<Map<string, BackfillState>> {
  const states = new Map<string, BackfillState>()
  const admin = createKafkaAdmin(kafka)
  try {
    const topics = await admin.listTopics()
    if (!topics.includes(stateTopic)) return states
  } finally {
    await admin.close()
  }
  await scanTopic({
    kafka,
    topic: stateTopic,
    onMessage: (m) => {
      const key = m.key?.toString('utf8')
      if (key === undefined) return
      if (m.value === null) states.delete(key)
      else states.set(key, JSON.parse(m.value.toString('utf8')) as BackfillState)
    },
  })
  return states
}

export function stateMessage(state: BackfillState): OutgoingMessage {
  return { key: state.backfillId, value: Buffer.from(JSON.stringify(state)) }
}

/** A ledger entry: what became of one row. */
export interface LedgerEntry {
  /** Line number (file) or partition:offset (topic). */
  row: string
  outcome: 'MATCHED' | 'NOT_FOUND' | 'REJECTED' | 'INVALID'
  transactionId: string | null
  /** For INVALID: stable code and the specific reason. */
  code?: string
  reason?: string
}

/** Every ledger entry of a backfill (read committed). */
export async function readLedger(kafka: Kafka, topic: string): Promise<LedgerEntry[]> {
  const entries: LedgerEntry[] = []
  await scanTopic({
    kafka,
    topic,
    onMessage: (m) => {
      if (m.value !== null) entries.push(JSON.parse(m.value.toString('utf8')) as LedgerEntry)
    },
  })
  return entries
}
