/**
 * Scaling out and in while records flow: a second instance joins the group in
 * the middle of a run (partitions move to it), then the first one stops
 * gracefully (its partitions move back). Read committed, every raw event still
 * has exactly one result.
 */
import type { EnrichmentClient } from '@tep/enrichment-client'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { createKafka } from '@tep/kafka'
import { createMetricsRegistry } from '@tep/observability'
import type { RawTransaction } from '@tep/schemas'
import { startTransactionIngest, type TransactionIngest } from '@tep/transaction-ingest'
import type { TestAdmin as Admin } from '../support/kafka-test-kit.ts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createKafkaTestKit } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import {
  consumedToEnd,
  createIngestTopics,
  fetchSamples,
  produceRaw,
  rawFromSample,
  readOutcomes,
  registryForTests,
  serdeForTests,
  simClient,
  startSim,
  type TestTopics,
} from './ingest-harness.ts'

const EVENTS = 4_000
const kit = createKafkaTestKit()
const registry = registryForTests()
const serde = serdeForTests(registry)
let sim: EnrichmentSim
let client: EnrichmentClient
let topics: TestTopics
let admin: Admin
const instances: TransactionIngest[] = []

function start(name: string): Promise<TransactionIngest> {
  return startTransactionIngest({
    kafka: createKafka({
      brokers: inject('kafkaBrokers'),
      clientId: `${topics.groupId}-${name}`,
      logLevel: 'error',
    }),
    schemaRegistry: registry,
    client,
    topics,
    // Few records in flight and small transactions: a slow, steady run with many commit points.
    lookupMode: 'single',
    concurrency: 4,
    // 20 per partition on average: one transaction takes finished records of all four.
    maxRecordsPerTransaction: 80,
    groupId: topics.groupId,
    transactionalIdPrefix: topics.transactionalIdPrefix,
    instanceId: name,
    consumer: { sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 200 },
    metricsRegistry: createMetricsRegistry({ service: `ingest-${name}`, defaultMetrics: false }),
  })
}

async function committedTotal(): Promise<number> {
  const offsets = await admin.fetchOffsets({ groupId: topics.groupId, topics: [topics.input] })
  return (offsets[0]?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0)
}

beforeAll(async () => {
  sim = await startSim(53)
  // A few ms per call so that the run is still going when the group changes.
  await fetch(`${sim.url}/__admin/faults`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ latency: { distribution: 'uniform', minMs: 60, maxMs: 100 } }),
  })
  client = simClient(sim)
  topics = await createIngestTopics(kit, 'ingest-scale', 4)
  admin = kit.admin()
  await admin.connect()
})

afterAll(async () => {
  await Promise.allSettled(instances.map((i) => i.stop()))
  await client?.close()
  await sim?.close()
  await kit.disconnectAll()
})

describe('transaction-ingest instances joining and leaving the group', () => {
  it('move partitions without losing or duplicating a result', async () => {
    const samples = [
      ...(await fetchSamples(sim, 'card', 'found', 100, 8)),
      ...(await fetchSamples(sim, 'transfer', 'found', 30, 8)),
    ]
    const events: RawTransaction[] = Array.from({ length: EVENTS }, (_, i) =>
      rawFromSample(samples[i % samples.length]!, `scale-${i}`),
    )
    await produceRaw(kit, serde, topics.input, events)

    const first = await start('first')
    instances.push(first)
    await waitFor(
      'the first instance to commit a part of the run',
      async () => (await committedTotal()) >= EVENTS / 5,
      { timeoutMs: 60_000, intervalMs: 50 },
    )

    const second = await start('second')
    instances.push(second)
    await waitFor('the second instance to own partitions', () => second.status().assigned.length > 0, {
      timeoutMs: 30_000,
    })
    const atJoin = await committedTotal()
    expect(atJoin).toBeLessThan(EVENTS)

    await waitFor(
      'progress after the rebalance',
      async () => (await committedTotal()) >= atJoin + EVENTS / 10,
      { timeoutMs: 60_000, intervalMs: 50 },
    )
    // Leave while records remain (the second instance takes over the rest).
    expect(await committedTotal()).toBeLessThan(EVENTS * 0.8)
    await first.stop()

    await waitFor(
      'the second instance to consume everything',
      () => consumedToEnd(admin, topics.groupId, topics.input),
      { timeoutMs: 90_000 },
    )
    await second.stop()

    const outcomes = await readOutcomes(kit.kafka, serde, topics)
    expect(outcomes.duplicatePositions).toEqual({})
    expect(outcomes.total).toBe(EVENTS)
    for (let i = 0; i < EVENTS; i++) {
      const got = outcomes.enriched.get(`scale-${i}`)?.[0]
      expect(got?.status, `scale-${i}`).toBe('MATCHED')
      expect(got?.shopUid).toBe(samples[i % samples.length]!.expected.shopUid)
    }
  })
})
