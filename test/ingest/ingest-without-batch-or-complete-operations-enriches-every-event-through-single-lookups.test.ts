/**
 * The interface description publishes neither the batch POST nor the `complete`
 * lookup variants. Against a service that answers 404 for them (the simulator's
 * `withoutBatchAndComplete`), the real ingest, with its default lookup settings
 * and in single mode, enriches every event through the plain single lookup:
 * as many results as inputs, the status the simulator decides, nothing in the
 * DLQ, not one pause (the ingest's own pause counter), and each missing variant
 * counted as contract drift on the ingest's metrics.
 */
import { createEnrichmentClient, type EnrichmentClient } from '@tep/enrichment-client'
import { startEnrichmentSim, type EnrichmentSim } from '@tep/enrichment-sim'
import { CONTRACT_DRIFT_METRIC, createContractDriftRecorder, createMetricsRegistry } from '@tep/observability'
import type { CardTransaction, RawTransaction } from '@tep/schemas'
import { startTransactionIngest, type TransactionIngest } from '@tep/transaction-ingest'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKafkaTestKit, type TestAdmin as Admin } from '../support/kafka-test-kit.ts'
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
  SIM_CLIENT,
  type SimSample,
} from './ingest-harness.ts'

const kit = createKafkaTestKit()
const registry = registryForTests()
const serde = serdeForTests(registry)
let sim: EnrichmentSim
let admin: Admin
const clients: EnrichmentClient[] = []
const running: TransactionIngest[] = []

beforeAll(async () => {
  sim = await startEnrichmentSim({ seed: 33, shops: 3_000, merchants: 300, withoutBatchAndComplete: true })
  admin = kit.admin()
  await admin.connect()
})

afterAll(async () => {
  await Promise.allSettled(running.map((i) => i.stop()))
  await Promise.allSettled(clients.map((c) => c.close()))
  await sim?.close()
  await kit.disconnectAll()
})

/** Half of the events carry the ISO fields the lookup now sends too (street, DE 3, DE 22). */
function withIsoFields(raw: RawTransaction, i: number): RawTransaction {
  if (i % 2 === 1 || raw.card === null) return raw
  const card: CardTransaction = { ...raw.card, street: 'Národní 1', processingCode: '000000', posEntryMode: '' }
  return { ...raw, card }
}

describe.each(['batch', 'single'] as const)('transaction-ingest in %s mode against a service without batch and complete lookups', (mode) => {
  it('enriches every event through single lookups, with no DLQ record, no pause, and the missing variants counted as drift', async () => {
    const topics = await createIngestTopics(kit, `ingest-no-variants-${mode}`, 2)
    const metricsRegistry = createMetricsRegistry({ service: `ingest-no-variants-${mode}`, defaultMetrics: false })
    const drift = createContractDriftRecorder({ registry: metricsRegistry })
    const client = createEnrichmentClient({
      baseUrl: sim.url,
      tokenUrl: sim.tokenUrl,
      credentials: { type: 'oauth', ...SIM_CLIENT },
      retry: { retries: 1, initialDelayMs: 20, maxDelayMs: 200 },
      limits: { maxConcurrent: 64 },
      onContractDrift: drift.listener,
    })
    clients.push(client)
    const seed = mode === 'batch' ? 1 : 2
    const samples: SimSample[] = [
      ...(await fetchSamples(sim, 'card', 'found', 60, seed)),
      ...(await fetchSamples(sim, 'card', 'notFound', 15, seed)),
    ]
    const events = samples.map((s, i) => withIsoFields(rawFromSample(s, `${mode}-${i}`), i))

    const ingest = await startTransactionIngest({
      ...ingestTestOptions(topics, registry, client),
      // The defaults of INGEST_LOOKUP_MODE / INGEST_COMPLETE_LOOKUPS in batch mode: an empty
      // table is cold, so the complete batch comes first, then the plain batch.
      lookupMode: mode,
      completeLookups: 'auto',
      retryPolicy: { initialDelayMs: 100, maxDelayMs: 1_000 },
      metricsRegistry,
      onContractDrift: drift.listener,
    })
    running.push(ingest)
    const metric = async (name: string, labels: Record<string, string> = {}): Promise<number> => {
      const m = await metricsRegistry.getSingleMetric(name)?.get()
      return (m?.values ?? [])
        .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
        .reduce((sum, v) => sum + v.value, 0)
    }

    await produceRaw(kit, serde, topics.input, events)
    // Watched from the ingest's own pause signal, so that a pause ends the wait at once.
    const settled = await waitFor(
      'every raw event committed (or a pause)',
      async () => {
        const pauses = await metric('ingest_pauses_total')
        if (pauses > 0) return `paused ${pauses} times: ${ingest.readiness.snapshot().checks.consumer?.detail ?? ''}`
        return (await consumedToEnd(admin, topics.groupId, topics.input)) ? 'done' : undefined
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    )
    expect(settled).toBe('done')

    const outcomes = await readOutcomes(kit.kafka, serde, topics)
    expect(outcomes.duplicatePositions).toEqual({})
    expect(outcomes.dlq.size).toBe(0)
    expect(outcomes.enriched.size).toBe(events.length)
    samples.forEach((sample, i) => {
      const got = outcomes.enriched.get(`${mode}-${i}`)?.[0]
      if (sample.expected.outcome === 'found') {
        expect(got, `${mode}-${i}`).toMatchObject({ status: 'MATCHED', shopUid: sample.expected.shopUid })
        // The plain single lookup answered, so the details came from the table or the API, not a complete answer.
        expect(got?.lookup?.operation).toBe('findByCardTransaction')
      } else expect(got?.status, `${mode}-${i}`).toBe('NOT_FOUND')
    })

    expect(await metric('ingest_pauses_total')).toBe(0)
    expect(await metric('ingest_partitions_paused')).toBe(0)
    expect(ingest.readiness.snapshot().checks.consumer?.ready).toBe(true)
    expect(await metric('ingest_records_out_total', { outcome: 'DLQ' })).toBe(0)
    const missing = mode === 'batch'
      ? ['completeFindByCardTransactionBatch', 'findByCardTransactionBatch', 'completeFindByCardTransaction']
      : ['completeFindByCardTransaction']
    for (const operation of missing) {
      expect(await metric(CONTRACT_DRIFT_METRIC, { api: 'enrichment', operation, kind: 'operation-missing' }), operation).toBeGreaterThanOrEqual(1)
      expect(await metric('ingest_lookup_variant_missing', { operation }), operation).toBe(1)
    }
    await ingest.stop()
  })
})
