import { createEnrichmentClient, type EnrichmentClient } from '@tep/enrichment-client'
import { startEnrichmentSim, type EnrichmentSim } from '@tep/enrichment-sim'
import { enrichmentFeed, startInvalidationPoller } from '@tep/invalidation-poller'
import { AvroSerde, createKafka, createSchemaRegistry } from '@tep/kafka'
import { createLogger, createMetricsRegistry } from '@tep/observability'
import { merchantData, shopData, startRefresher, type RefresherHandle } from '@tep/refresher'
import type { EnrichedTransaction, Merchant, MerchantDataFetched, RawTransaction, Shop } from '@tep/schemas'
import { sampleToRaw } from '@tep/sample-traffic'
import { generateSamples } from '@tep/sim-data'
import { startTransactionIngest, type TransactionIngest } from '@tep/transaction-ingest'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { readTopic } from '../support/read-topic.ts'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import { captureLog } from '../support/log-capture.ts'
import { withinDeadline } from '../support/within-deadline.ts'

// Kept in memory: a set-up that hangs reports the services' last lines (see beforeAll).
const log = captureLog()
const logger = createLogger({ name: 'refresher-test', level: 'info', destination: log.destination })
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
let refresher: RefresherHandle | undefined
let ingest: TransactionIngest | undefined
const registry = createMetricsRegistry({ service: 'refresher-test', defaultMetrics: false })

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

async function admin(
  path: string,
  body: unknown,
): Promise<{ items: { id: number; level: string; type: string; key: string }[] }> {
  const res = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${await res.text()}`)
  return (await res.json()) as { items: { id: number; level: string; type: string; key: string }[] }
}

/** What transaction-ingest publishes after reading a shop or merchant on a cache miss. */
async function publishFetched(records: MerchantDataFetched[]): Promise<void> {
  const codec = serde.topic(topics.fetched, 'MerchantDataFetched')
  const producer = kit.producer()
  await producer.connect()
  await producer.send({
    topic: topics.fetched,
    messages: await Promise.all(records.map(async (r) => ({ key: r.uid, value: await codec.encode(r) }))),
  })
}

async function fetchedShop(uid: string, fetchedAt: number): Promise<MerchantDataFetched> {
  const shop: Shop = { ...shopData(await client.getShop(uid)), fetchedAt, invalidationItemId: null }
  return { entityType: 'SHOP', uid, shop, merchant: null, notFound: false, fetchedBy: 'test-ingest' }
}

async function fetchedMerchant(uid: string, fetchedAt: number): Promise<MerchantDataFetched> {
  const merchant: Merchant = {
    ...merchantData(await client.getMerchant(uid)),
    fetchedAt,
    invalidationItemId: null,
  }
  return { entityType: 'MERCHANT', uid, shop: null, merchant, notFound: false, fetchedBy: 'test-ingest' }
}

/** The latest record per key of a compacted topic (null = tombstone). */
async function latestByKey<T>(topic: string, schema: 'Shop' | 'Merchant'): Promise<Map<string, T | null>> {
  const codec = serde.topic(topic, schema)
  const latest = new Map<string, T | null>()
  for (const r of await readTopic(kit.kafka, topic))
    latest.set(r.key!.toString('utf8'), r.value === null ? null : ((await codec.decode(r.value)) as T))
  return latest
}

function startPoller() {
  return startInvalidationPoller({
    kafka: serviceKafka,
    serde,
    feed: enrichmentFeed(client),
    levels: ['shop', 'merchant', 'handle'],
    pageSize: 100,
    pollIntervalMs: 3_600_000,
    startAt: new Date(0),
    transactionalId: uniqueName('poller-tx'),
    topics: { items: topics.invalidations, cursor: topics.cursor },
    logger,
  })
}

async function enrich(raw: RawTransaction): Promise<EnrichedTransaction> {
  const rawCodec = serde.topic(topics.raw, 'RawTransaction')
  const producer = kit.producer()
  await producer.connect()
  await producer.send({
    topic: topics.raw,
    messages: [{ key: raw.transactionId, value: await rawCodec.encode(raw) }],
  })
  const codec = serde.topic(topics.enriched, 'EnrichedTransaction')
  return waitFor(`the enriched result of ${raw.transactionId}`, async () => {
    for (const r of await readTopic(kit.kafka, topics.enriched)) {
      if (r.key?.toString('utf8') === raw.transactionId) return codec.decode(r.value)
    }
    return undefined
  })
}

async function counterValue(name: string, labels: Record<string, string>): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get()
  return (
    metric?.values
      .filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))
      .reduce((sum, v) => sum + v.value, 0) ?? 0
  )
}

let setupStep = 'starting the enrichment simulator'
// Once a set-up hung in CI (the hook's 180 s timeout, nothing else): this says at which step, with the log.
beforeAll(() =>
  withinDeadline(170_000, () => `set-up stuck at "${setupStep}"; last log lines:\n${log.tail()}`, setUp),
)

async function setUp(): Promise<void> {
  sim = await startEnrichmentSim({ shops: 400, merchants: 40 })
  client = createEnrichmentClient({
    baseUrl: sim.url,
    credentials: { type: 'oauth', clientId: 'sim-client', clientSecret: 'sim-secret' },
  })
  setupStep = 'creating the topics'
  await kit.createTopics([topics.invalidations, topics.fetched, topics.dlq, topics.raw, topics.enriched], 3)
  await kit.createTopics([topics.shops, topics.merchants], 3, { 'cleanup.policy': 'compact' })
  await kit.createTopics([topics.cursor], 1, { 'cleanup.policy': 'compact' })
  setupStep = 'starting the refresher'
  refresher = await startRefresher({
    kafka: serviceKafka,
    serde,
    client,
    invalidationsEnabled: true,
    maxAgeMs: 7 * 86_400_000,
    sweepIntervalMs: 3_600_000,
    groupId: uniqueName('refresher'),
    transactionalIdPrefix: uniqueName('refresher-tx'),
    topics,
    logger,
    registry,
    consumer: { sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 200 },
    retryPolicy: { initialDelayMs: 50, maxDelayMs: 500 },
  })
  setupStep = 'waiting for the refresher\'s partitions'
  await refresher.whenAssigned()
}

afterAll(async () => {
  await ingest?.stop()
  await refresher?.stop()
  await client?.close()
  await sim?.close()
  await kit.disconnectAll()
})

describe('refresher', () => {
  it('writes re-fetched shops and merchants and tombstones deleted shops on the compacted topics, newest version winning', async () => {
    const updated = sim.dataset.shop(10)
    const deleted = sim.dataset.shop(20)
    const untouched = sim.dataset.shop(30)
    const rebranded = sim.dataset.merchant(updated.merchantIndex)
    const seededAt = Date.now() - 60_000

    // Ingest saw these on cache misses: the table learns them through the refresher.
    await publishFetched([
      await fetchedShop(updated.uid, seededAt),
      await fetchedShop(deleted.uid, seededAt),
      await fetchedShop(untouched.uid, seededAt),
      await fetchedMerchant(rebranded.uid, seededAt),
    ])
    // Waits on the topic itself: the refresher's view also counts writes not committed yet.
    const seeded = await waitFor('the seeded shops on the compacted topic', async () => {
      const shops = await latestByKey<Shop>(topics.shops, 'Shop')
      return [updated, deleted, untouched].every((s) => shops.get(s.uid)) && shops
    })
    const before = seeded.get(updated.uid)!

    // The enrichment service changes data; the invalidation poller carries the items to Kafka.
    const shopItem = (await admin('/__admin/mutations', { kind: 'shopUpdate', shopUid: updated.uid }))
      .items[0]!
    const deleteItem = (await admin('/__admin/mutations', { kind: 'deleteShop', shopUid: deleted.uid }))
      .items[0]!
    const rebrandItem = (
      await admin('/__admin/mutations', {
        kind: 'rebrand',
        merchantUid: rebranded.uid,
        name: 'Renamed Brand',
      })
    ).items[0]!
    // An invalidation of a shop the table never held: nothing is fetched for it.
    await admin('/__admin/mutations', { kind: 'shopUpdate', shopUid: sim.dataset.shop(40).uid })
    const poller = await startPoller()
    try {
      await waitFor('the refresh, the tombstone and the rebrand on the compacted topics', async () => {
        const shops = await latestByKey<Shop>(topics.shops, 'Shop')
        const merchants = await latestByKey<Merchant>(topics.merchants, 'Merchant')
        return (
          shops.get(updated.uid)?.invalidationItemId === shopItem.id &&
          shops.get(deleted.uid) === null &&
          merchants.get(rebranded.uid)?.invalidationItemId === rebrandItem.id
        )
      })
    } finally {
      await poller.stop()
    }

    const shops = await latestByKey<Shop>(topics.shops, 'Shop')
    const current = shopData(await client.getShop(updated.uid))
    expect(shops.get(updated.uid)).toMatchObject({ ...current, invalidationItemId: shopItem.id })
    expect(shops.get(updated.uid)!.tags).not.toEqual(before.tags)
    expect(shops.get(deleted.uid)).toBeNull()
    expect(deleteItem.type).toBe('delete')
    expect(shops.get(untouched.uid)).toMatchObject({ uid: untouched.uid, fetchedAt: seededAt })
    expect(shops.has(sim.dataset.shop(40).uid)).toBe(false)
    expect(
      await counterValue('tep_refresher_skipped_total', { entity: 'shop', reason: 'not-in-table' }),
    ).toBeGreaterThanOrEqual(1)
    const merchants = await latestByKey<Merchant>(topics.merchants, 'Merchant')
    expect(merchants.get(rebranded.uid)).toMatchObject({
      name: 'Renamed Brand',
      invalidationItemId: rebrandItem.id,
    })

    // A late ingest snapshot older than the refresh must not overwrite it.
    const staleBefore = await counterValue('tep_refresher_skipped_total', { entity: 'shop', reason: 'stale' })
    const stale: MerchantDataFetched = {
      entityType: 'SHOP',
      uid: updated.uid,
      shop: { ...before, url: 'https://stale.example', fetchedAt: seededAt + 1 },
      merchant: null,
      notFound: false,
      fetchedBy: 'test-ingest',
    }
    await publishFetched([stale])
    await waitFor(
      'the stale ingest snapshot to be skipped',
      async () =>
        (await counterValue('tep_refresher_skipped_total', { entity: 'shop', reason: 'stale' })) >
        staleBefore,
    )
    expect((await latestByKey<Shop>(topics.shops, 'Shop')).get(updated.uid)).toMatchObject({
      ...current,
      invalidationItemId: shopItem.id,
    })
  })

  it('without invalidations, the sweep re-reads entries before they are a week old', async () => {
    const old = sim.dataset.shop(50)
    const young = sim.dataset.shop(51)
    const oldAt = Date.now() - (7 * 24 - 1.5) * 3_600_000
    await publishFetched([
      await fetchedShop(old.uid, oldAt),
      await fetchedShop(young.uid, Date.now() - 86_400_000),
    ])
    await waitFor('the seeded shops on the compacted topic', async () => {
      const shops = await latestByKey<Shop>(topics.shops, 'Shop')
      return shops.has(old.uid) && shops.has(young.uid)
    })

    const sweep = await refresher!.sweepNow()
    expect(sweep.requested).toEqual({ shop: 1, merchant: 0 })
    const shops = await waitFor('the old shop re-read on the compacted topic', async () => {
      const latest = await latestByKey<Shop>(topics.shops, 'Shop')
      return (latest.get(old.uid)?.fetchedAt ?? 0) > oldAt && latest
    })
    expect(shops.get(old.uid)).toMatchObject({
      ...shopData(await client.getShop(old.uid)),
      invalidationItemId: null,
    })
    expect(shops.get(old.uid)!.fetchedAt).toBeGreaterThan(oldAt)
  })

  it('a later enrichment through transaction-ingest carries the refreshed shop', async () => {
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
    const used = new Set([10, 20, 30, 40, 50, 51].map((i) => sim.dataset.shop(i).uid))
    const sample = generateSamples(sim.dataset, { count: 20, kind: 'card', outcome: 'found', seed: 3 }).find(
      (s) => s.expected.outcome === 'found' && !used.has(s.expected.shopUid),
    )!
    const shopUid = sample.expected.outcome === 'found' ? sample.expected.shopUid : ''
    const raw = (id: string) => sampleToRaw(sample, { transactionId: id })!.raw

    // First enrichment: a miss; what ingest fetched reaches the table through the refresher.
    const first = await enrich(raw(uniqueName('tx-first')))
    expect(first).toMatchObject({ status: 'MATCHED', shopUid })
    await waitFor("the shop in ingest's table", () => ingest!.tables.shops.get(shopUid))

    // The shop changes at the service; poller and refresher carry the change to the table.
    const item = (await admin('/__admin/mutations', { kind: 'shopUpdate', shopUid })).items[0]!
    const poller = await startPoller()
    try {
      await waitFor(
        "the refreshed shop in ingest's table",
        () => ingest!.tables.shops.get(shopUid)?.invalidationItemId === item.id,
      )
    } finally {
      await poller.stop()
    }

    const later = await enrich(raw(uniqueName('tx-later')))
    const current = shopData(await client.getShop(shopUid))
    expect(later).toMatchObject({ status: 'MATCHED', shopUid, lookup: { shopSource: 'TABLE' } })
    expect(later.shop).toMatchObject({ ...current, invalidationItemId: item.id })
    expect(later.shop!.tags).not.toEqual(first.shop!.tags)
  })

  it('an API outage pauses and redoes the batch: nothing goes to the DLQ and the refresh lands after recovery', async () => {
    const shop = sim.dataset.shop(60)
    const seededAt = Date.now() - 60_000
    await publishFetched([await fetchedShop(shop.uid, seededAt)])
    await waitFor('the seeded shop on the compacted topic', async () =>
      (await latestByKey<Shop>(topics.shops, 'Shop')).has(shop.uid),
    )
    const pausesBefore = await counterValue('tep_refresher_partition_pauses_total', {})

    // More failures than the client retries in-line: the pipeline itself has to back off and redo.
    await fetch(`${sim.url}/__admin/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ errorRate: 1, errorStatus: 503, count: 6, pathPrefix: '/v5/shops' }),
    })
    const item = (await admin('/__admin/mutations', { kind: 'shopUpdate', shopUid: shop.uid })).items[0]!
    const poller = await startPoller()
    try {
      await waitFor(
        'the refresh after the outage on the compacted topic',
        async () =>
          (await latestByKey<Shop>(topics.shops, 'Shop')).get(shop.uid)?.invalidationItemId === item.id,
      )
    } finally {
      await poller.stop()
      await fetch(`${sim.url}/__admin/faults`, { method: 'DELETE' })
    }
    expect(await counterValue('tep_refresher_partition_pauses_total', {})).toBeGreaterThan(pausesBefore)
    expect(await readTopic(kit.kafka, topics.dlq)).toEqual([])
  })
})
