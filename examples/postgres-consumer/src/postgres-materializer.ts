import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry'
import {
  AvroSerde,
  createReplayingGroupMember,
  TOPICS,
  type Kafka,
  type KafkaLogger,
  type ReplayBatch,
  type ReplayingGroupMember,
} from '@tep/kafka'
import type { EnrichedTransaction } from '@tep/schemas'
import type { Pool, PoolClient } from 'pg'

/**
 * The table and the consumer's offsets. `event` keeps the whole enriched event
 * (JSON) for columns this example does not spell out.
 */
export const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS enriched_transactions (
  transaction_id   text PRIMARY KEY,
  status           text NOT NULL,
  amount           text NOT NULL,
  currency         text NOT NULL,
  occurred_at      timestamptz NOT NULL,
  enriched_at      timestamptz NOT NULL,
  shop_uid         text,
  merchant_uid     text,
  merchant_name    text,
  handle           text,
  backfill_id      text,
  kafka_partition  integer NOT NULL,
  kafka_offset     bigint NOT NULL,
  event            jsonb NOT NULL
);
CREATE TABLE IF NOT EXISTS kafka_consumer_offsets (
  consumer     text NOT NULL,
  topic        text NOT NULL,
  partition    integer NOT NULL,
  next_offset  bigint NOT NULL,
  PRIMARY KEY (consumer, topic, partition)
);
`

const UPSERT = `
INSERT INTO enriched_transactions (transaction_id, status, amount, currency, occurred_at, enriched_at,
  shop_uid, merchant_uid, merchant_name, handle, backfill_id, kafka_partition, kafka_offset, event)
VALUES ($1, $2, $3, $4, to_timestamp($5 / 1000.0), to_timestamp($6 / 1000.0), $7, $8, $9, $10, $11, $12, $13, $14)
ON CONFLICT (transaction_id) DO UPDATE SET
  status = EXCLUDED.status, amount = EXCLUDED.amount, currency = EXCLUDED.currency,
  occurred_at = EXCLUDED.occurred_at, enriched_at = EXCLUDED.enriched_at, shop_uid = EXCLUDED.shop_uid,
  merchant_uid = EXCLUDED.merchant_uid, merchant_name = EXCLUDED.merchant_name, handle = EXCLUDED.handle,
  backfill_id = EXCLUDED.backfill_id, kafka_partition = EXCLUDED.kafka_partition,
  kafka_offset = EXCLUDED.kafka_offset, event = EXCLUDED.event`

const SAVE_OFFSET = `
INSERT INTO kafka_consumer_offsets (consumer, topic, partition, next_offset) VALUES ($1, $2, $3, $4)
ON CONFLICT (consumer, topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset`

export interface PostgresMaterializerOptions {
  kafka: Kafka
  schemaRegistry: SchemaRegistry
  pool: Pool
  /** Default transactions.enriched.v1. */
  topic?: string
  /** Name of this materialisation: the key of its offsets in the database and its Kafka group id. */
  consumerName: string
  consumer?: { sessionTimeout?: number; heartbeatInterval?: number; maxWaitTimeInMs?: number }
  logger?: KafkaLogger
  /** Told after each database commit (tests, progress). */
  onCommitted?: (event: { partition: number; nextOffset: string; rows: number }) => void
}

export interface PostgresMaterializer {
  start(): Promise<void>
  stop(): Promise<void>
}

/** Creates the table and the offsets table when missing. */
export async function ensureSchema(pool: Pool): Promise<void> {
  await pool.query(SCHEMA_SQL)
}

/**
 * Forgets where this materialisation was, so that its next start reads the topic
 * from the beginning again (a replay). The table is kept: upserts by
 * transactionId in topic order bring every row to the topic's latest state.
 */
export async function resetOffsets(pool: Pool, consumerName: string, topic: string = TOPICS.transactionsEnriched): Promise<void> {
  await pool.query('DELETE FROM kafka_consumer_offsets WHERE consumer = $1 AND topic = $2', [consumerName, topic])
}

/**
 * Materialises enriched transactions into PostgreSQL exactly once. The offsets
 * live in the database, not in Kafka: each fetched batch is upserted by
 * transactionId and the partition's next offset saved in ONE database
 * transaction, and on every assignment each partition is read from the offset
 * the database holds (a @tep/kafka replaying group member, which never commits
 * to Kafka). A crash between the two is impossible to observe: either both are
 * committed or neither, and the next start continues from the database.
 * Records are read committed, so aborted pipeline attempts never reach the table.
 */
export function createPostgresMaterializer(options: PostgresMaterializerOptions): PostgresMaterializer {
  const topic = options.topic ?? TOPICS.transactionsEnriched
  const { pool, consumerName } = options
  const codec = new AvroSerde({ registry: options.schemaRegistry }).topic(topic, 'EnrichedTransaction')
  let member: ReplayingGroupMember | undefined

  const loadOffsets = async (): Promise<Map<number, bigint>> => {
    const { rows } = await pool.query<{ partition: number; next_offset: string }>(
      'SELECT partition, next_offset FROM kafka_consumer_offsets WHERE consumer = $1 AND topic = $2',
      [consumerName, topic],
    )
    return new Map(rows.map((r) => [r.partition, BigInt(r.next_offset)]))
  }

  const upsert = async (db: PoolClient, partition: number, offset: string, value: Buffer | null, key: string | null): Promise<void> => {
    if (value === null) {
      // A tombstone deletes the row (enriched topics do not send them today; a compacted copy might).
      if (key !== null) await db.query('DELETE FROM enriched_transactions WHERE transaction_id = $1', [key])
      return
    }
    const e: EnrichedTransaction = await codec.decode(value)
    await db.query(UPSERT, [
      e.transactionId,
      e.status,
      e.raw.amount,
      e.raw.currency,
      e.raw.occurredAt,
      e.enrichedAt,
      e.shopUid,
      e.merchantUid,
      e.merchant?.name ?? null,
      e.handle,
      e.backfill?.backfillId ?? null,
      partition,
      offset,
      JSON.stringify(e),
    ])
  }

  // A batch that throws is handed over again (after a pause) by the member, from the same position.
  const onBatch = async (batch: ReplayBatch): Promise<void> => {
    const messages = batch.records
    if (messages.length === 0 || batch.signal.aborted) return
    const last = messages[messages.length - 1]!.offset
    const nextOffset = (last + 1n).toString()
    const db = await pool.connect()
    try {
      await db.query('BEGIN')
      for (const m of messages) await upsert(db, batch.partition, m.offset.toString(), m.value, m.key?.toString('utf8') ?? null)
      await db.query(SAVE_OFFSET, [consumerName, topic, batch.partition, nextOffset])
      await db.query('COMMIT')
    } catch (err) {
      await db.query('ROLLBACK').catch(() => undefined)
      throw err
    } finally {
      db.release()
    }
    options.onCommitted?.({ partition: batch.partition, nextOffset, rows: messages.length })
  }

  return {
    async start() {
      await ensureSchema(pool)
      member = createReplayingGroupMember({
        kafka: options.kafka,
        groupId: consumerName,
        topics: [topic],
        sessionTimeoutMs: options.consumer?.sessionTimeout ?? 30_000,
        heartbeatIntervalMs: options.consumer?.heartbeatInterval ?? 3_000,
        maxWaitTimeMs: options.consumer?.maxWaitTimeInMs ?? 500,
        // Each assigned partition continues at the offset the database holds; none stored: from the beginning.
        startPositions: async () => {
          const stored = await loadOffsets()
          return new Map([...stored].map(([partition, offset]) => [`${topic}:${partition}`, offset]))
        },
        onAssigned: () => {},
        onBatch,
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      })
      await member.start()
    },
    async stop() {
      await member?.stop()
    },
  }
}
