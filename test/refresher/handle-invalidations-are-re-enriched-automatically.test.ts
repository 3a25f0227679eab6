import { createEnrichmentClient, type EnrichmentClient } from '@tep/enrichment-client'
import { startEnrichmentSim, type EnrichmentSim } from '@tep/enrichment-sim'
import { enrichmentFeed, startInvalidationPoller } from '@tep/invalidation-poller'
import { AvroSerde, createKafka, createSchemaRegistry } from '@tep/kafka'
import { createLogger, createMetricsRegistry } from '@tep/observability'
import { AutoReenricher, CORRECTION_HEADER, startRefresher, type RefresherHandle } from '@tep/refresher'
import { sampleToRaw } from '@tep/sample-traffic'
import { exampleRawCardTransaction, type EnrichedTransaction, type Invalidation, type RawTransaction } from '@tep/schemas'
import { generateSamples } from '@tep/sim-data'
import { startTransactionIngest, type TransactionIngest } from '@tep/transaction-ingest'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createKafkaTestKit, uniqueName, type CollectedMessage } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'
import { waitFor } from '../support/wait-for.ts'

/**
 * Issue 25, item 5: with `reenrichHandles` on, the refresher acts on handle
 * (mapping) invalidations by itself: the transactions enriched with an
 * invalidated handle are enriched again, and the new result is marked as a
 * correction.
 */
const logger = createLogger({ name: 'auto-reenrich-test', level: 'silent' })
const kit = createKafkaTestKit()
const serviceKafka = createKafka({ brokers: inject('kafkaBrokers'), clientId: uniqueName('services'), logLevel: 'error' })
const serde = new AvroSerde({ registry: createSchemaRegistry({ url: inject('registryUrl') }) })
const registry = createMetricsRegistry({ service: 'refresher-test', defaultMetrics: false })
let sim: EnrichmentSim
let client: EnrichmentClient
let refresher: RefresherHandle | undefined
let ingest: TransactionIngest | undefined

const topics = {
  invalidations: uniqueName('invalidations'),
  cursor: uniqueName('invalidations-cursor'),
  fetched: uniqueName('fetched'),
  shops: uniqueName('shops'),
  merchants: uniqueName('merchants'),
  dlq: uniqueName('dlq'),
  raw: uniqueName('raw'),
  enriched: uniqueName('enriched'),
}

async function resultsOf(transactionId: string): Promise<{ value: EnrichedTransaction; message: CollectedMessage }[]> {
  const codec = serde.topic(topics.enriched, 'EnrichedTransaction')
  const out: { value: EnrichedTransaction; message: CollectedMessage }[] = []
  for (const r of await readTopic(kit.kafka, topics.enriched))
    if (r.key?.toString('utf8') === transactionId) out.push({ value: await codec.decode(r.value), message: r })
  return out
}

async function produceRaw(raw: RawTransaction): Promise<void> {
  const codec = serde.topic(topics.raw, 'RawTransaction')
  const producer = kit.producer()
  await producer.connect()
  await producer.send({ topic: topics.raw, messages: [{ key: raw.transactionId, value: await codec.encode(raw) }] })
}

beforeAll(async () => {
  sim = await startEnrichmentSim({ shops: 400, merchants: 40 })
  client = createEnrichmentClient({
    baseUrl: sim.url,
    credentials: { type: 'oauth', clientId: 'sim-client', clientSecret: 'sim-secret' },
  })
  await kit.createTopics([topics.invalidations, topics.fetched, topics.dlq, topics.raw, topics.enriched], 3)
  await kit.createTopics([topics.shops, topics.merchants], 3, { 'cleanup.policy': 'compact' })
  await kit.createTopics([topics.cursor], 1, { 'cleanup.policy': 'compact' })
  refresher = await startRefresher({
    kafka: serviceKafka,
    serde,
    client,
    invalidationsEnabled: true,
    maxAgeMs: 7 * 86_400_000,
    sweepIntervalMs: 3_600_000,
    reenrichHandles: { intervalMs: 300, maxPerRun: 100 },
    groupId: uniqueName('refresher'),
    transactionalIdPrefix: uniqueName('refresher-tx'),
    topics,
    logger,
    registry,
    consumer: { sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 200 },
  })
  ingest = await startTransactionIngest({
    kafka: kit.kafka,
    schemaRegistry: createSchemaRegistry({ url: inject('registryUrl') }),
    client,
    lookupMode: 'single',
    topics: {
      input: topics.raw,
      enriched: topics.enriched,
      dlq: topics.dlq,
      fetched: topics.fetched,
      shops: topics.shops,
      merchants: topics.merchants,
    },
    groupId: uniqueName('ingest'),
    transactionalIdPrefix: uniqueName('ingest-tx'),
    consumer: { sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 200 },
  })
  await refresher.whenAssigned()
})

afterAll(async () => {
  await ingest?.stop()
  await refresher?.stop()
  await client?.close()
  await sim?.close()
  await kit.disconnectAll()
})

describe('automatic re-enrichment of invalidated handles', () => {
  it('re-enriches a transaction whose handle was remapped, marked as a correction, and nothing else', async () => {
    const [sample, other, untouched] = generateSamples(sim.dataset, { count: 20, kind: 'card', outcome: 'found', seed: 9 })
      .filter((s) => s.expected.outcome === 'found')
      .filter((s, i, all) => all.findIndex((t) => t.expected.outcome === 'found' && s.expected.outcome === 'found' && t.expected.shopUid === s.expected.shopUid) === i)
    const txId = uniqueName('tx-remapped')
    const keptId = uniqueName('tx-kept')
    await produceRaw(sampleToRaw(sample!, { transactionId: txId })!.raw)
    await produceRaw(sampleToRaw(untouched!, { transactionId: keptId })!.raw)
    const [first] = await waitFor('the first result', async () => {
      const r = await resultsOf(txId)
      return r.length === 1 && r
    })
    await waitFor('the other first result', async () => (await resultsOf(keptId)).length === 1)
    expect(first!.value).toMatchObject({ status: 'MATCHED' })
    expect(first!.message.headers[CORRECTION_HEADER]).toBeUndefined()
    const handle = first!.value.handle!
    const newShop = other!.expected.outcome === 'found' ? other!.expected.shopUid : ''
    expect(newShop).not.toBe(first!.value.shopUid)

    // The service moves the handle to another shop; the poller carries the handle-level item to Kafka.
    const remap = await fetch(`${sim.url}/__admin/mutations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'remap', handle, toShopUid: newShop }),
    })
    expect(remap.status).toBe(201)
    const poller = await startInvalidationPoller({
      kafka: serviceKafka,
      serde,
      feed: enrichmentFeed(client),
      levels: ['handle'],
      pageSize: 100,
      pollIntervalMs: 3_600_000,
      startAt: new Date(0),
      transactionalId: uniqueName('poller-tx'),
      topics: { items: topics.invalidations, cursor: topics.cursor },
      logger,
    })
    try {
      // Nobody runs reenrich by hand: the refresher's own run republishes, ingest enriches again.
      const results = await waitFor('the corrected result', async () => {
        const r = await resultsOf(txId)
        return r.length >= 2 && r
      })
      const corrected = results.at(-1)!
      expect(corrected.value).toMatchObject({ status: 'MATCHED', handle, shopUid: newShop, raw: { refresh: true } })
      expect(corrected.message.headers[CORRECTION_HEADER]?.toString()).toBe('handle-invalidated')
    } finally {
      await poller.stop()
    }
    // Later runs find it re-enriched already: exactly one correction, and none for the other transaction.
    const report = await refresher!.reenrichNow()
    expect(report).toMatchObject({ handles: 1, republished: 0, alreadyRefreshed: 1, deferred: 0 })
    expect(await resultsOf(txId)).toHaveLength(2)
    expect(await resultsOf(keptId)).toHaveLength(1)
    const republished = await registry.getSingleMetric('tep_refresher_reenrich_republished_total')?.get()
    expect(republished?.values[0]?.value).toBe(1)
  })

  it('republishes at most maxPerRun per run and leaves the rest for the next run', async () => {
    // Enriched results and handle items written directly: only the selection and its budget are under test.
    const own = { invalidations: uniqueName('budget-inv'), enriched: uniqueName('budget-enriched'), raw: uniqueName('budget-raw') }
    await kit.createTopics([own.invalidations, own.enriched, own.raw], 3)
    const enrichedCodec = serde.topic(own.enriched, 'EnrichedTransaction')
    const invalidationCodec = serde.topic(own.invalidations, 'Invalidation')
    const producer = kit.producer()
    await producer.connect()
    const at = Date.now()
    const results: EnrichedTransaction[] = Array.from({ length: 5 }, (_, i) => ({
      transactionId: `tx-${i}`,
      raw: exampleRawCardTransaction(`tx-${i}`),
      status: 'MATCHED',
      rejectReason: null,
      handle: `h-${i}`,
      shopUid: null,
      merchantUid: null,
      shop: null,
      merchant: null,
      enrichedAt: at - 60_000,
      lookup: null,
    }))
    await producer.send({
      topic: own.enriched,
      messages: await Promise.all(results.map(async (r) => ({ key: r.transactionId, value: await enrichedCodec.encode(r) }))),
    })
    const items: Invalidation[] = results.map((r, i) => ({
      itemId: i + 1,
      level: 'handle',
      type: 'remap',
      entityKey: r.handle!,
      seenAt: at,
      feedCurrentTime: null,
    }))
    await producer.send({
      topic: own.invalidations,
      messages: await Promise.all(items.map(async (v) => ({ key: v.entityKey, value: await invalidationCodec.encode(v) }))),
    })
    const reenricher = new AutoReenricher({ kafka: serviceKafka, serde, topics: own, intervalMs: 3_600_000, maxPerRun: 3, firstLookbackMs: 3_600_000, logger })
    expect(await reenricher.runOnce()).toMatchObject({ handles: 5, republished: 3, deferred: 2 })
    // The window did not move on: the next run republishes the two left, not the three in flight.
    const second = await reenricher.runOnce()
    expect(second).toMatchObject({ handles: 5, republished: 2, deferred: 0 })
    const raw = await readTopic(kit.kafka, own.raw)
    expect(raw.map((r) => r.key?.toString('utf8')).sort()).toEqual(['tx-0', 'tx-1', 'tx-2', 'tx-3', 'tx-4'])
  })
})
