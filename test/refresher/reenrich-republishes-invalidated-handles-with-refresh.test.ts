import {
  createEnrichmentClient,
  type CardTransactionInput,
  type EnrichmentClient,
} from '@tep/enrichment-client'
import { startEnrichmentSim, type EnrichmentSim } from '@tep/enrichment-sim'
import { enrichmentFeed, startInvalidationPoller } from '@tep/invalidation-poller'
import { AvroSerde, createKafka, createSchemaRegistry } from '@tep/kafka'
import { createLogger } from '@tep/observability'
import { reenrichHandles } from '@tep/refresher'
import { exampleRawCardTransaction, type EnrichedTransaction } from '@tep/schemas'
import { generateSamples } from '@tep/sim-data'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { readTopic } from '../support/read-topic.ts'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'

const logger = createLogger({ name: 'reenrich-test', level: 'silent' })
const kit = createKafkaTestKit()
// The services build their @platformatic/kafka producers from a client made by createKafka.
const serviceKafka = createKafka({
  brokers: inject('kafkaBrokers'),
  clientId: uniqueName('services'),
  logLevel: 'error',
})
const serde = new AvroSerde({ registry: createSchemaRegistry({ url: inject('registryUrl') }) })
let sim: EnrichmentSim
let client: EnrichmentClient

const topics = {
  invalidations: uniqueName('invalidations'),
  cursor: uniqueName('cursor'),
  enriched: uniqueName('enriched'),
  raw: uniqueName('raw'),
}

function enriched(transactionId: string, handle: string | null, enrichedAt: number): EnrichedTransaction {
  return {
    transactionId,
    raw: { ...exampleRawCardTransaction(transactionId), receivedAt: enrichedAt - 5 },
    status: handle === null ? 'NOT_FOUND' : 'MATCHED',
    rejectReason: null,
    handle,
    shopUid: null,
    merchantUid: null,
    shop: null,
    merchant: null,
    enrichedAt,
    lookup: null,
  }
}

beforeAll(async () => {
  sim = await startEnrichmentSim({ shops: 400, merchants: 40 })
  client = createEnrichmentClient({
    baseUrl: sim.url,
    credentials: { type: 'oauth', clientId: 'sim-client', clientSecret: 'sim-secret' },
  })
  await kit.createTopics([topics.invalidations, topics.enriched, topics.raw], 3)
  await kit.createTopics([topics.cursor], 1, { 'cleanup.policy': 'compact' })
})

afterAll(async () => {
  await client?.close()
  await sim?.close()
  await kit.disconnectAll()
})

describe('reenrich', () => {
  it('republishes, with refresh=true, the raw events whose latest enrichment used a remapped handle', async () => {
    // Two real handles, issued by lookups of card transactions.
    const samples = generateSamples(sim.dataset, { count: 2, kind: 'card', outcome: 'found', seed: 7 })
    const handles: string[] = []
    for (const sample of samples) {
      const result = await client.findByCardTransaction(sample.input as CardTransactionInput)
      expect(result.handle).toBeDefined()
      handles.push(result.handle!)
    }
    const [remapped, kept] = handles as [string, string]

    const before = Date.now() - 60_000
    const enrichedCodec = serde.topic(topics.enriched, 'EnrichedTransaction')
    const producer = kit.producer()
    await producer.connect()
    const results = [
      enriched('tx-old-mapping', remapped, before), // must be re-enriched
      enriched('tx-other-handle', kept, before), // its handle was not invalidated
      enriched('tx-moved-on', remapped, before),
      enriched('tx-moved-on', kept, before + 1000), // its latest result no longer uses the handle
      enriched('tx-no-handle', null, before),
    ]
    await producer.send({
      topic: topics.enriched,
      messages: await Promise.all(
        results.map(async (r) => ({ key: r.transactionId, value: await enrichedCodec.encode(r) })),
      ),
    })

    // The service re-maps one handle; the poller publishes the handle-level item.
    const item = (await (
      await fetch(`${sim.url}/__admin/mutations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'remap', handle: remapped }),
      })
    ).json()) as {
      items: { id: number; level: string; key: string }[]
    }
    expect(item.items).toEqual([expect.objectContaining({ level: 'handle', key: remapped })])
    let published!: () => void
    const itemPublished = new Promise<void>((resolve) => (published = resolve))
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
      onPageCommitted: ({ cursor }) => {
        if (cursor.lastItemId >= item.items[0]!.id) published()
      },
    })
    await itemPublished
    await poller.stop()

    const dryRun = await reenrichHandles({
      kafka: serviceKafka,
      serde,
      invalidationsSince: new Date(before),
      dryRun: true,
      topics,
      logger,
    })
    expect(dryRun).toMatchObject({
      handles: 1,
      republished: 0,
      transactionIds: ['tx-old-mapping'],
      dryRun: true,
    })
    expect(await readTopic(kit.kafka, topics.raw)).toEqual([])

    const report = await reenrichHandles({
      kafka: serviceKafka,
      serde,
      invalidationsSince: new Date(before),
      topics,
      logger,
    })
    expect(report).toMatchObject({
      handles: 1,
      scanned: results.length,
      republished: 1,
      alreadyRefreshed: 0,
      transactionIds: ['tx-old-mapping'],
    })
    const raw = await readTopic(kit.kafka, topics.raw)
    expect(raw.map((r) => r.key?.toString('utf8'))).toEqual(['tx-old-mapping'])
    const rawCodec = serde.topic(topics.raw, 'RawTransaction')
    expect(await rawCodec.decode(raw[0]!.value)).toEqual({ ...results[0]!.raw, refresh: true })
    // Marked as a correction; transaction-ingest copies the header onto the new result.
    expect(raw[0]!.headers['tep-correction']?.toString()).toBe('handle-invalidated')

    // Once re-enriched (a newer result for the transaction), running the tool again republishes nothing.
    await producer.send({
      topic: topics.enriched,
      messages: [
        {
          key: 'tx-old-mapping',
          value: await enrichedCodec.encode(enriched('tx-old-mapping', remapped, Date.now() + 1000)),
        },
      ],
    })
    const again = await reenrichHandles({
      kafka: serviceKafka,
      serde,
      invalidationsSince: new Date(before),
      topics,
      logger,
    })
    expect(again).toMatchObject({ republished: 0, alreadyRefreshed: 1 })
  })
})
