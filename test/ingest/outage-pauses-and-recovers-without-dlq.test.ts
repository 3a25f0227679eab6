/**
 * A systemic failure of the enrichment API (5xx storm, throttling with
 * Retry-After, answers slower than the timeout, revoked tokens) never turns
 * records into DLQ entries or results: consumption pauses (readiness says why,
 * metrics count it), and once the fault clears every record completes exactly once.
 */
import type { EnrichmentClient } from '@tep/enrichment-client'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { createMetricsRegistry } from '@tep/observability'
import type { RawTransaction } from '@tep/schemas'
import { startTransactionIngest, type TransactionIngest } from '@tep/transaction-ingest'
import type { TestAdmin as Admin } from '../support/kafka-test-kit.ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readTopic } from '../kafka/read-topic.ts'
import { createKafkaTestKit } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import {
  consumedToEnd,
  createIngestTopics,
  ingestTestOptions,
  fetchSamples,
  produceRaw,
  rawFromSample,
  readOutcomes,
  registryForTests,
  serdeForTests,
  simClient,
  setSimFaults,
  startSim,
  type SimSample,
  type TestTopics,
} from './ingest-harness.ts'

const kit = createKafkaTestKit()
const registry = registryForTests()
const serde = serdeForTests(registry)
const metricsRegistry = createMetricsRegistry({ service: 'ingest-outage', defaultMetrics: false })
let sim: EnrichmentSim
let client: EnrichmentClient
let ingest: TransactionIngest | undefined
let topics: TestTopics
let admin: Admin
let samples: SimSample[]
let produced = 0

const setFaults = (faults: Record<string, unknown> | null): Promise<void> => setSimFaults(sim, faults)

async function produce(count: number): Promise<void> {
  const events: RawTransaction[] = []
  for (let i = 0; i < count; i++) {
    events.push(rawFromSample(samples[(produced + i) % samples.length]!, `outage-${produced + i}`))
  }
  produced += count
  await produceRaw(kit, serde, topics.input, events)
}

async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = await metricsRegistry.getSingleMetric(name)?.get()
  return (m?.values ?? [])
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((sum, v) => sum + v.value, 0)
}

/** The consumer check goes unready with this code in its reason (the pause is visible). */
async function pausedBy(code: string): Promise<string> {
  return waitFor(
    `readiness to report a pause caused by ${code}`,
    () => {
      const check = ingest!.readiness.snapshot().checks.consumer
      return check !== undefined && !check.ready && check.detail?.includes(code) ? check.detail : undefined
    },
    { timeoutMs: 30_000, intervalMs: 50 },
  )
}

async function recovers(): Promise<void> {
  await waitFor(
    'every raw record to be committed',
    () => consumedToEnd(admin, topics.groupId, topics.input),
    { timeoutMs: 60_000 },
  )
  await waitFor(
    'the consumer check to be ready again',
    () => ingest!.readiness.snapshot().checks.consumer?.ready === true,
    { timeoutMs: 10_000 },
  )
}

async function nothingWrittenBeyond(committedResults: number): Promise<void> {
  expect(await readTopic(kit.kafka, topics.dlq)).toHaveLength(0)
  expect(await readTopic(kit.kafka, topics.enriched)).toHaveLength(committedResults)
}

beforeAll(async () => {
  sim = await startSim(23)
  // Short timeouts and one retry: a fault reaches the pipeline in well under a second.
  client = simClient(sim, { retries: 1, timeoutMs: 400 })
  topics = await createIngestTopics(kit, 'ingest-outage', 2)
  samples = await fetchSamples(sim, 'card', 'found', 40, 3)
  admin = kit.admin()
  await admin.connect()
  ingest = await startTransactionIngest({
    ...ingestTestOptions(topics, registry, client),
    lookupMode: 'batch',
    retryPolicy: { initialDelayMs: 100, maxDelayMs: 1_500 },
    metricsRegistry,
    lagIntervalMs: 500,
  })
})

afterAll(async () => {
  await setFaults(null).catch(() => undefined)
  await ingest?.stop()
  await client?.close()
  await sim?.close()
  await kit.disconnectAll()
})

describe('transaction-ingest during an enrichment API outage', () => {
  it('pauses on a 5xx storm without writing anything, and resumes when it ends', async () => {
    await setFaults({ errorRate: 1, errorStatus: 503 })
    await produce(60)
    const reason = await pausedBy('ENRICHMENT_SERVER_ERROR')
    expect(reason).toMatch(/paused by a systemic failure/)
    await waitFor(
      'a second pause (the backoff retried and failed again)',
      async () => (await metric('ingest_pauses_total', { reason: 'ENRICHMENT_SERVER_ERROR' })) >= 2,
    )
    expect(await metric('ingest_retries_total')).toBeGreaterThanOrEqual(2)
    expect(ingest!.readiness.isReady()).toBe(false)
    await nothingWrittenBeyond(0)
    // Nothing committed: the lag gauge (group offsets against the topic's end) counts every record.
    await waitFor('the lag gauge to count the 60 waiting records', async () => (await metric('ingest_consumer_lag')) === 60)

    await setFaults(null)
    await recovers()
    expect(ingest!.readiness.isReady()).toBe(true)
    await nothingWrittenBeyond(60)
  })

  it('pauses on 429 with Retry-After and resumes', async () => {
    await setFaults({ throttleRate: 1, retryAfterSeconds: 1 })
    await produce(60)
    await pausedBy('ENRICHMENT_THROTTLED')
    await nothingWrittenBeyond(60)
    await setFaults(null)
    await recovers()
    await nothingWrittenBeyond(120)
  })

  it('pauses when answers come slower than the timeout, and resumes', async () => {
    await setFaults({ latencyMs: 1_500 })
    await produce(60)
    await pausedBy('ENRICHMENT_TIMEOUT')
    await nothingWrittenBeyond(120)
    await setFaults(null)
    await recovers()
    await nothingWrittenBeyond(180)
  })

  it('rides over revoked tokens (renews the token) without losing or dead-lettering records', async () => {
    const unauthorized = async () =>
      (
        (await (await fetch(`${sim.url}/__admin/stats`)).json()) as {
          requests: { byStatus: Record<string, number> }
        }
      ).requests.byStatus['401'] ?? 0
    const before = await unauthorized()
    await setFaults({ revokeTokens: true })
    await produce(60)
    await recovers()
    // The revoked token was really refused at least once, and renewing it was enough.
    expect(await unauthorized()).toBeGreaterThan(before)
    await nothingWrittenBeyond(240)
  })

  it.each([431, 413])(
    'pauses when a proxy refuses even small requests as too large (%i), instead of dead-lettering the stream',
    async (status) => {
      const before = produced
      // A proxy's header limit or an oversized bearer token: every request is refused alike.
      await setFaults({ errorRate: 1, errorStatus: status, pathPrefix: '/v5' })
      await produce(60)
      const reason = await pausedBy('ENRICHMENT_REQUEST_TOO_LARGE')
      expect(reason).toMatch(/paused by a systemic failure/)
      await nothingWrittenBeyond(before)
      await setFaults(null)
      await recovers()
      await nothingWrittenBeyond(before + 60)
    },
  )

  it('in the end every record was enriched exactly once and the lag is zero', async () => {
    const outcomes = await readOutcomes(kit.kafka, serde, topics)
    expect(outcomes.duplicatePositions).toEqual({})
    expect(outcomes.dlq.size).toBe(0)
    expect(outcomes.enriched.size).toBe(produced)
    for (let i = 0; i < produced; i++) {
      const got = outcomes.enriched.get(`outage-${i}`)?.[0]
      expect(got?.status, `outage-${i}`).toBe('MATCHED')
      expect(got?.shopUid).toBe(samples[i % samples.length]!.expected.shopUid)
    }
    expect(await metric('ingest_records_out_total', { outcome: 'MATCHED' })).toBe(produced)
    expect(await metric('ingest_records_out_total', { outcome: 'DLQ' })).toBe(0)
    await waitFor('the lag gauge to reach 0', async () => (await metric('ingest_consumer_lag')) === 0, {
      timeoutMs: 10_000,
    })
  })
})
