/**
 * Raw records that retention (here DeleteRecords, what retention does to old segments) removes
 * before the ingest reads them are gone: nothing can enrich them any more. The ingest reads on
 * from the log start, as Kafka's auto.offset.reset would, but it must say so: an error log with
 * the offsets and `ingest_input_offsets_skipped_total`, which the alert
 * TepIngestSkippedRemovedInput watches. Before, the client moved the fetch in silence.
 *
 * The ingest is held back by an enrichment API outage (its partition paused at its committed
 * offset) while the log is trimmed ahead of it; when the API is back its next fetch is out of
 * range.
 */
import type { EnrichmentClient } from '@tep/enrichment-client'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { createMetricsRegistry } from '@tep/observability'
import type { RawTransaction } from '@tep/schemas'
import { startTransactionIngest, type TransactionIngest } from '@tep/transaction-ingest'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readTopic } from '../kafka/read-topic.ts'
import { createKafkaTestKit, type TestAdmin } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import {
  consumedToEnd,
  createIngestTopics,
  fetchSamples,
  ingestTestOptions,
  produceRaw,
  rawFromSample,
  registryForTests,
  serdeForTests,
  simClient,
  setSimFaults,
  startSim,
  type TestTopics,
} from './ingest-harness.ts'

const kit = createKafkaTestKit()
const registry = registryForTests()
const serde = serdeForTests(registry)
const metricsRegistry = createMetricsRegistry({ service: 'ingest-retention', defaultMetrics: false })
let sim: EnrichmentSim
let client: EnrichmentClient
let ingest: TransactionIngest | undefined
let topics: TestTopics
let admin: TestAdmin

const setFaults = (faults: Record<string, unknown> | null): Promise<void> => setSimFaults(sim, faults)

async function skipped(): Promise<number> {
  const m = await metricsRegistry.getSingleMetric('ingest_input_offsets_skipped_total')?.get()
  return (m?.values ?? []).filter((v) => v.labels.topic === topics.input).reduce((sum, v) => sum + v.value, 0)
}

beforeAll(async () => {
  sim = await startSim(41)
  client = simClient(sim, { retries: 1, timeoutMs: 400 })
  topics = await createIngestTopics(kit, 'ingest-retention', 1)
  admin = kit.admin()
  await admin.connect()
})

afterAll(async () => {
  await setFaults(null).catch(() => undefined)
  await ingest?.stop()
  await client?.close()
  await sim?.close()
  await kit.disconnectAll()
})

describe('raw records retention removed before the ingest read them', () => {
  it('are counted as skipped and logged, and the ingest reads on from the log start', async () => {
    const samples = await fetchSamples(sim, 'card', 'found', 40, 5)
    const events = (from: number, count: number): RawTransaction[] =>
      Array.from({ length: count }, (_, i) => rawFromSample(samples[(from + i) % samples.length]!, `retention-${from + i}`))

    // Records removed before the group ever read (no committed offset): "from the beginning" is the log
    // start, no gap, though the ingest asks for offset 0 and is answered out of range.
    await produceRaw(kit, serde, topics.input, events(0, 20))
    await admin.deleteRecords(topics.input, [{ partition: 0, offset: 10n }])
    ingest = await startTransactionIngest({
      ...ingestTestOptions(topics, registry, client),
      lookupMode: 'batch',
      retryPolicy: { initialDelayMs: 100, maxDelayMs: 1_000 },
      metricsRegistry,
    })
    await waitFor('the 10 records left to be committed', () => consumedToEnd(admin, topics.groupId, topics.input), { timeoutMs: 60_000 })
    expect(await skipped()).toBe(0)

    // The API fails: the partition pauses at its committed offset, 20, and waits. Retention removes 200 records it has not read.
    await setFaults({ errorRate: 1, errorStatus: 503 })
    await produceRaw(kit, serde, topics.input, events(20, 300))
    await waitFor(
      'the partition to pause on the outage',
      () => ingest!.readiness.snapshot().checks.consumer?.detail?.includes('ENRICHMENT_SERVER_ERROR') === true,
      { timeoutMs: 30_000, intervalMs: 50 },
    )
    await admin.deleteRecords(topics.input, [{ partition: 0, offset: 220n }])
    await setFaults(null)

    await waitFor('every record left to be committed', () => consumedToEnd(admin, topics.groupId, topics.input), { timeoutMs: 60_000 })
    expect(await skipped()).toBe(200)
    // The 10 read before and the 100 after the trim, once each; none of the 200 removed; nothing dead-lettered.
    const enriched = await readTopic(kit.kafka, topics.enriched)
    const ids = enriched.map((r) => r.key?.toString('utf8')).sort()
    expect(ids).toEqual([...events(10, 10), ...events(220, 100)].map((e) => e.transactionId).sort())
    expect(await readTopic(kit.kafka, topics.dlq)).toHaveLength(0)
  })
})
