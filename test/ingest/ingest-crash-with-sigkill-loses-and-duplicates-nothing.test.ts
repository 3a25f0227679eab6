/**
 * The ingest process is killed with SIGKILL several times during a run of a few
 * thousand events and restarted each time; the last run ends with SIGTERM. Read
 * committed, every raw event has exactly one result (enriched or DLQ): 0 lost,
 * 0 duplicated.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import type { RawTransaction } from '@tep/schemas'
import type { TestAdmin as Admin } from '../support/kafka-test-kit.ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKafkaTestKit } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import {
  consumedToEnd,
  createIngestTopics,
  fetchSamples,
  produceRaw,
  rawFromSample,
  readOutcomes,
  serdeForTests,
  SIM_CLIENT,
  startSim,
  testKafkaEnv,
  type TestTopics,
} from './ingest-harness.ts'

const MAIN = fileURLToPath(new URL('../../services/transaction-ingest/src/main.ts', import.meta.url))
const EVENTS = 3_000
const KILLS = 3

const kit = createKafkaTestKit()
const serde = serdeForTests()
let sim: EnrichmentSim
let topics: TestTopics
let admin: Admin
const children = new Set<ChildProcess>()

interface Running {
  child: ChildProcess
  output: string[]
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

function startIngestProcess(run: number): Running {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      ...testKafkaEnv(),
      ENRICHMENT_API_URL: sim.url,
      ENRICHMENT_CLIENT_ID: SIM_CLIENT.clientId,
      ENRICHMENT_CLIENT_SECRET: SIM_CLIENT.clientSecret,
      LOG_LEVEL: 'warn',
      METRICS_PORT: '0',
      // The same replica restarting (a StatefulSet pod): the transactional id is per
      // instance, and the restart aborts the killed run's open transaction at once.
      // Under a new name the broker aborts it only after the transaction timeout
      // (10 s) plus its cleanup interval (10 s), per kill.
      INGEST_INSTANCE_ID: 'crash-test',
      INGEST_LOOKUP_MODE: run % 2 === 0 ? 'batch' : 'single',
      INGEST_BATCH_MAX: '50',
      INGEST_CONCURRENCY: '100',
      // Small transactions: many commit points for the kills to fall between.
      INGEST_MAX_RECORDS_PER_TRANSACTION: '50',
      INGEST_API_MAX_CONCURRENT: '8',
      // The broker's minimum: a killed instance's partitions move on after 6 s.
      INGEST_SESSION_TIMEOUT: '6s',
      INGEST_GROUP_ID: topics.groupId,
      INGEST_TRANSACTIONAL_ID_PREFIX: topics.transactionalIdPrefix,
      INGEST_INPUT_TOPIC: topics.input,
      INGEST_ENRICHED_TOPIC: topics.enriched,
      INGEST_DLQ_TOPIC: topics.dlq,
      INGEST_FETCHED_TOPIC: topics.fetched,
      INGEST_SHOPS_TOPIC: topics.shops,
      INGEST_MERCHANTS_TOPIC: topics.merchants,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  const output: string[] = []
  child.stdout?.on('data', (d: Buffer) => output.push(d.toString('utf8')))
  child.stderr?.on('data', (d: Buffer) => output.push(d.toString('utf8')))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child)
      resolve({ code, signal })
    }),
  )
  return { child, output, exited }
}

async function committedTotal(): Promise<bigint> {
  const offsets = await admin.fetchOffsets({ groupId: topics.groupId, topics: [topics.input] })
  return (offsets[0]?.partitions ?? []).reduce(
    (sum, p) => sum + (BigInt(p.offset) > 0n ? BigInt(p.offset) : 0n),
    0n,
  )
}

beforeAll(async () => {
  // Every lookup takes a few ms, so the run lasts long enough to be killed in the middle.
  sim = await startSim(31)
  await fetch(`${sim.url}/__admin/faults`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ latency: { distribution: 'uniform', minMs: 5, maxMs: 15 } }),
  })
  topics = await createIngestTopics(kit, 'ingest-crash', 3)
  admin = kit.admin()
  await admin.connect()
})

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL')
  await sim?.close()
  await kit.disconnectAll()
})

describe('transaction-ingest killed with SIGKILL during a run', () => {
  it('loses nothing and duplicates nothing', async () => {
    const samples = [
      ...(await fetchSamples(sim, 'card', 'found', 200, 5)),
      ...(await fetchSamples(sim, 'card', 'notFound', 50, 5)),
      ...(await fetchSamples(sim, 'transfer', 'found', 50, 5)),
    ]
    const events: RawTransaction[] = Array.from({ length: EVENTS }, (_, i) =>
      rawFromSample(samples[i % samples.length]!, `crash-${i}`),
    )
    const garbage = Array.from({ length: 10 }, (_, i) => ({
      key: `crash-garbage-${i}`,
      value: Buffer.from(`garbage ${i}`),
    }))
    await produceRaw(kit, serde, topics.input, events, garbage)
    const total = events.length + garbage.length

    let previous = 0n
    for (let run = 0; run < KILLS; run++) {
      const ingest = startIngestProcess(run)
      // Kill only once this run has committed something of its own, mid-stream.
      const target = previous + BigInt(Math.floor(total / (KILLS + 2)))
      previous = await waitFor(
        `run ${run} to commit past ${target} records`,
        async () => {
          const done = await committedTotal()
          return done >= target ? done : undefined
        },
        { timeoutMs: 60_000, intervalMs: 50 },
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\nchild output:\n${ingest.output.join('')}`, { cause: err })
      })
      expect(previous).toBeLessThan(BigInt(total))
      ingest.child.kill('SIGKILL')
      expect(await ingest.exited).toEqual({ code: null, signal: 'SIGKILL' })
    }

    const last = startIngestProcess(KILLS)
    await waitFor(
      'the last run to consume everything',
      () => consumedToEnd(admin, topics.groupId, topics.input),
      {
        timeoutMs: 120_000,
        intervalMs: 200,
      },
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\nchild output:\n${last.output.join('')}`, { cause: err })
    })
    last.child.kill('SIGTERM')
    expect(await last.exited, last.output.join('')).toEqual({ code: 0, signal: null })

    const outcomes = await readOutcomes(kit.kafka, serde, topics)
    expect(outcomes.duplicatePositions).toEqual({})
    expect(outcomes.total).toBe(total)
    const lost = events.map((e) => e.transactionId).filter((id) => !outcomes.enriched.has(id))
    expect(lost).toEqual([])
    for (const g of garbage) expect(outcomes.dlq.get(g.key)?.code).toBe('AVRO_BAD_MAGIC_BYTE')
    for (let i = 0; i < EVENTS; i++) {
      const want = samples[i % samples.length]!.expected
      const got = outcomes.enriched.get(`crash-${i}`)![0]!
      expect(got.status).toBe(want.outcome === 'found' ? 'MATCHED' : 'NOT_FOUND')
      if (want.outcome === 'found') expect(got.shopUid).toBe(want.shopUid)
    }
  })
})
