/**
 * The reference PostgreSQL consumer (examples/postgres-consumer) against a real
 * PostgreSQL server of the test's own: enriched events with several versions
 * per transaction (and an aborted transaction that must never show) are
 * materialised; the consumer is killed with SIGKILL after its first database
 * commit and started again with more events on the topic; then a replay from
 * the beginning runs over a table whose rows were tampered with. After the crash
 * and after the replay the table equals the topic's latest state: one row per
 * transactionId, holding the last committed version, and the stored offsets are
 * the topic's ends.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { exampleEnrichedTransaction, type EnrichedTransaction } from '@tep/schemas'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'
import { waitFor } from '../support/wait-for.ts'
import { serdeForTests, testKafkaEnv } from '../ingest/ingest-harness.ts'
import { startPostgres, type PostgresServer } from './postgres-server.ts'

const MAIN = fileURLToPath(new URL('../../examples/postgres-consumer/src/main.ts', import.meta.url))
const kit = createKafkaTestKit()
const serde = serdeForTests()
const topic = uniqueName('pg-enriched')
const consumerName = uniqueName('pg-consumer')
const children = new Set<ChildProcess>()
let server: PostgresServer
let pool: pg.Pool

beforeAll(async () => {
  server = await startPostgres()
  pool = new pg.Pool({ connectionString: server.url, max: 2 })
  await kit.createTopics([topic], 3)
})

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await pool?.end()
  await server?.stop()
  await kit.disconnectAll()
})

const STATUSES = ['NOT_FOUND', 'MATCHED', 'REJECTED'] as const

function version(id: number, v: number): EnrichedTransaction {
  const base = exampleEnrichedTransaction()
  const transactionId = `tx-${id}`
  return {
    ...base,
    transactionId,
    raw: { ...base.raw, transactionId },
    status: STATUSES[(id + v) % 3]!,
    rejectReason: STATUSES[(id + v) % 3] === 'REJECTED' ? { code: 'X', message: 'refused', httpStatus: 400 } : null,
    enrichedAt: base.enrichedAt + v,
    backfill: v === 0 ? null : { backfillId: `run-${v}`, source: 'test.csv', row: String(id) },
  }
}

/** Versions `v` of transactions [from, to), in transactions of 250 records; `abort` aborts them instead. */
async function produce(from: number, to: number, v: number, abort = false): Promise<void> {
  const codec = serde.topic(topic, 'EnrichedTransaction')
  const producer = kit.producer({ transactionalId: uniqueName('pg-tx'), idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  try {
    for (let i = from; i < to; i += 250) {
      const messages = []
      for (let id = i; id < Math.min(to, i + 250); id++)
        messages.push({ key: `tx-${id}`, value: await codec.encode(version(id, v)) })
      const tx = await producer.transaction()
      await tx.send({ topic, messages })
      if (abort) await tx.abort()
      else await tx.commit()
    }
  } finally {
    await producer.disconnect()
  }
}

interface Latest {
  partition: number
  offset: string
  status: string
  backfillId: string | null
}

/** The topic's latest committed version of every transaction. */
async function latestState(): Promise<{ rows: Map<string, Latest>; ends: Map<number, string> }> {
  const codec = serde.topic(topic, 'EnrichedTransaction')
  const rows = new Map<string, Latest>()
  const ends = new Map<number, string>()
  for (const m of await readTopic(kit.kafka, topic, { timeoutMs: 60_000 })) {
    const e = await codec.decode(m.value)
    rows.set(e.transactionId, {
      partition: m.partition,
      offset: m.offset,
      status: e.status,
      backfillId: e.backfill?.backfillId ?? null,
    })
    ends.set(m.partition, (BigInt(m.offset) + 1n).toString())
  }
  return { rows, ends }
}

async function tableState(): Promise<Map<string, Latest>> {
  const { rows } = await pool.query<{
    transaction_id: string
    kafka_partition: number
    kafka_offset: string
    status: string
    backfill_id: string | null
  }>('SELECT transaction_id, kafka_partition, kafka_offset, status, backfill_id FROM enriched_transactions')
  return new Map(
    rows.map((r) => [
      r.transaction_id,
      { partition: r.kafka_partition, offset: String(r.kafka_offset), status: r.status, backfillId: r.backfill_id },
    ]),
  )
}

async function storedOffsets(): Promise<Map<number, string>> {
  const { rows } = await pool.query<{ partition: number; next_offset: string }>(
    'SELECT partition, next_offset FROM kafka_consumer_offsets WHERE consumer = $1 AND topic = $2',
    [consumerName, topic],
  )
  return new Map(rows.map((r) => [r.partition, String(r.next_offset)]))
}

function startConsumer(args: string[] = []): { child: ChildProcess; committed: Promise<void>; exited: Promise<unknown> } {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: {
      ...process.env,
      ...testKafkaEnv(),
      DATABASE_URL: server.url,
      PG_CONSUMER_NAME: consumerName,
      PG_CONSUMER_TOPIC: topic,
      PG_CONSUMER_SESSION_TIMEOUT: '6s',
      LOG_LEVEL: 'debug',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  let output = ''
  const committed = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      output += d.toString('utf8')
      if (output.includes('batch committed to PostgreSQL')) resolve()
    })
    child.once('exit', (code, signal) => reject(new Error(`consumer exited (${code ?? signal}): ${output}`)))
  })
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString('utf8')
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  void exited.then(() => children.delete(child))
  committed.catch(() => undefined)
  return { child, committed, exited }
}

/** The table and the stored offsets reach the topic's latest state. */
async function expectTableEqualsTopic(): Promise<void> {
  const expected = await latestState()
  await waitFor(
    'the table to equal the topic',
    async () => {
      const table = await tableState()
      if (table.size !== expected.rows.size) return false
      for (const [id, row] of expected.rows) if (JSON.stringify(table.get(id)) !== JSON.stringify(row)) return false
      return true
    },
    { timeoutMs: 120_000, intervalMs: 250 },
  )
  expect(Object.fromEntries(await tableState())).toEqual(Object.fromEntries(expected.rows))
  expect(Object.fromEntries(await storedOffsets())).toEqual(Object.fromEntries(expected.ends))
}

describe('the PostgreSQL consumer', () => {
  it('holds the topic latest state after a SIGKILL and after a replay from the beginning', async () => {
    // Three committed versions of 1 000 transactions, an aborted fourth for half of them.
    await produce(0, 1_000, 0)
    await produce(0, 1_000, 1)
    await produce(0, 500, 99, true)
    await produce(0, 1_000, 2)

    const first = startConsumer()
    await first.committed
    first.child.kill('SIGKILL')
    await first.exited

    // More events while it is down: new versions of some rows, and new rows.
    await produce(300, 1_500, 3)
    startConsumer()
    await expectTableEqualsTopic()
    const table = await tableState()
    expect([...table.values()].some((r) => r.backfillId === 'run-99')).toBe(false)

    // Replay: the table is tampered with, the offsets are forgotten, the topic is read again.
    const running = [...children]
    for (const c of running) c.kill('SIGTERM')
    await Promise.all(running.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))))
    await pool.query("UPDATE enriched_transactions SET status = 'TAMPERED', kafka_offset = -1")
    startConsumer(['--replay'])
    await expectTableEqualsTopic()
  })
})
