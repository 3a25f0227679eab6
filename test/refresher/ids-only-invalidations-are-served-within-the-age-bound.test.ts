import { createEnrichmentClient, type EnrichmentClient } from '@tep/enrichment-client'
import { startEnrichmentSim, type EnrichmentSim } from '@tep/enrichment-sim'
import {
  enrichmentFeed,
  startInvalidationPoller,
  type InvalidationPollerHandle,
  type PageCommitted,
} from '@tep/invalidation-poller'
import { AvroSerde, createKafka, createSchemaRegistry } from '@tep/kafka'
import { createLogger, createMetricsRegistry, type Registry } from '@tep/observability'
import { shopData, startRefresher, type RefresherHandle } from '@tep/refresher'
import { sampleToRaw } from '@tep/sample-traffic'
import type { EnrichedTransaction, RawTransaction } from '@tep/schemas'
import { generateSamples } from '@tep/sim-data'
import { startTransactionIngest, type TransactionIngest } from '@tep/transaction-ingest'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'
import { waitFor } from '../support/wait-for.ts'

/**
 * Issue 25, item 1: a feed whose batches hold only `ids` (the letter of the
 * interface description) must not stall the poller, and a changed shop must be
 * served fresh within the one-week rule the description sets for clients that
 * cannot use invalidations: here REFRESH_MAX_AGE is 20 s so the test can see it.
 */
const MAX_AGE_MS = 20_000
const SWEEP_INTERVAL_MS = 1_000
// refresh after 20 - 1 - 9 = 10 s: a generous margin for a busy two-core machine.
const SWEEP_MARGIN_MS = 9_000

const logger = createLogger({ name: 'ids-only-test', level: 'silent' })
const kit = createKafkaTestKit()
const serviceKafka = createKafka({
  brokers: inject('kafkaBrokers'),
  clientId: uniqueName('services'),
  logLevel: 'error',
})
const serde = new AvroSerde({ registry: createSchemaRegistry({ url: inject('registryUrl') }) })
const refresherRegistry = createMetricsRegistry({ service: 'refresher-test', defaultMetrics: false })
const pollerRegistry = createMetricsRegistry({ service: 'poller-test', defaultMetrics: false })
let sim: EnrichmentSim
let client: EnrichmentClient
let refresher: RefresherHandle | undefined
let ingest: TransactionIngest | undefined
let poller: InvalidationPollerHandle | undefined
const committedPages: PageCommitted[] = []
const pageWaiters: (() => void)[] = []

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

async function metricSum(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get()
  return (
    metric?.values
      .filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))
      .reduce((sum, v) => sum + v.value, 0) ?? 0
  )
}

/** Resolves when the poller has committed a page whose cursor reaches `itemId` (an event, not a poll). */
function pollerReaches(itemId: number): Promise<PageCommitted> {
  return new Promise((resolve) => {
    const check = () => {
      const page = committedPages.find((p) => p.cursor.lastItemId >= itemId)
      if (page === undefined) return false
      resolve(page)
      return true
    }
    if (!check()) pageWaiters.push(() => void check())
  })
}

async function enrich(raw: RawTransaction): Promise<EnrichedTransaction> {
  const rawCodec = serde.topic(topics.raw, 'RawTransaction')
  const producer = kit.producer()
  await producer.connect()
  await producer.send({ topic: topics.raw, messages: [{ key: raw.transactionId, value: await rawCodec.encode(raw) }] })
  const codec = serde.topic(topics.enriched, 'EnrichedTransaction')
  return waitFor(`the enriched result of ${raw.transactionId}`, async () => {
    for (const r of await readTopic(kit.kafka, topics.enriched))
      if (r.key?.toString('utf8') === raw.transactionId) return codec.decode(r.value)
    return undefined
  })
}

beforeAll(async () => {
  sim = await startEnrichmentSim({ shops: 400, merchants: 40, invalidationShape: 'ids-only' })
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
    maxAgeMs: MAX_AGE_MS,
    sweepIntervalMs: SWEEP_INTERVAL_MS,
    sweepMarginMs: SWEEP_MARGIN_MS,
    groupId: uniqueName('refresher'),
    transactionalIdPrefix: uniqueName('refresher-tx'),
    topics,
    logger,
    registry: refresherRegistry,
    consumer: { sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 200 },
    retryPolicy: { initialDelayMs: 50, maxDelayMs: 500 },
  })
  ingest = await startTransactionIngest({
    kafka: kit.kafka,
    schemaRegistry: createSchemaRegistry({ url: inject('registryUrl') }),
    client,
    lookupMode: 'single',
    invalidationsEnabled: true,
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
  poller = await startInvalidationPoller({
    kafka: serviceKafka,
    serde,
    feed: enrichmentFeed(client),
    levels: ['shop', 'merchant', 'handle'],
    pageSize: 100,
    pollIntervalMs: 200,
    startAt: new Date(0),
    transactionalId: uniqueName('poller-tx'),
    topics: { items: topics.invalidations, cursor: topics.cursor },
    logger,
    registry: pollerRegistry,
    backoff: { initialDelayMs: 50, maxDelayMs: 500 },
    onPageCommitted: (page) => {
      committedPages.push(page)
      for (const wake of pageWaiters.splice(0)) wake()
    },
  })
  await refresher.whenAssigned()
  await refresher.whenRescanned()
})

afterAll(async () => {
  await poller?.stop()
  await ingest?.stop()
  await refresher?.stop()
  await client?.close()
  await sim?.close()
  await kit.disconnectAll()
})

describe('a feed that sends only ids', () => {
  it('is followed without stalling, and a changed shop is served fresh within REFRESH_MAX_AGE', async () => {
    const sample = generateSamples(sim.dataset, { count: 20, kind: 'card', outcome: 'found', seed: 4 }).find(
      (s) => s.expected.outcome === 'found',
    )!
    const shopUid = sample.expected.outcome === 'found' ? sample.expected.shopUid : ''
    const raw = (id: string) => sampleToRaw(sample, { transactionId: id })!.raw

    // A miss: ingest fetches the shop, the refresher stores it, ingest's table learns it.
    const first = await enrich(raw(uniqueName('tx-first')))
    expect(first).toMatchObject({ status: 'MATCHED', shopUid })
    const cached = await waitFor("the shop in ingest's table", () => ingest!.tables.shops.get(shopUid))

    // The service changes the shop and announces it on the feed with an id and nothing else.
    const item = (
      (await (
        await fetch(`${sim.url}/__admin/mutations`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ kind: 'shopUpdate', shopUid }),
        })
      ).json()) as { items: { id: number }[] }
    ).items[0]!
    const page = await pollerReaches(item.id)
    expect(page.items.find((i) => i.itemId === item.id)).toMatchObject({
      level: 'unknown',
      entityKey: '',
      missing: ['level', 'keys'],
    })

    // The refresher cannot tell which entry changed: it sweeps entries before they reach the age bound.
    const refreshed = await waitFor(
      "the re-read shop in ingest's table",
      () => {
        const now = ingest!.tables.shops.get(shopUid)
        return now !== undefined && now.fetchedAt > cached.fetchedAt && now
      },
      { timeoutMs: 60_000 },
    )
    const current = shopData(await client.getShop(shopUid))
    expect(refreshed).toMatchObject(current)
    expect(refreshed.tags).not.toEqual(cached.tags)
    // The promise: the old snapshot was replaced before it was REFRESH_MAX_AGE old (data stamps, not test time).
    expect(refreshed.fetchedAt - cached.fetchedAt).toBeLessThanOrEqual(MAX_AGE_MS)
    expect(refresher!.ageBoundUntil()).toBeGreaterThanOrEqual(cached.fetchedAt + MAX_AGE_MS)

    const later = await enrich(raw(uniqueName('tx-later')))
    // (With one shop in its table the ingest counts as cold and uses complete lookups: the source may be API.)
    expect(later).toMatchObject({ status: 'MATCHED', shopUid })
    expect(later.shop).toMatchObject(current)

    // Served, not stalled: the poller went on, nothing paused, nothing was dead-lettered.
    expect(poller!.position()!.lastItemId).toBeGreaterThanOrEqual(item.id)
    expect(await metricSum(pollerRegistry, 'tep_invalidation_poller_errors_total')).toBe(0)
    expect(
      await metricSum(pollerRegistry, 'tep_invalidation_poller_incomplete_items_total', { missing: 'level,keys' }),
    ).toBeGreaterThanOrEqual(1)
    expect(
      await metricSum(refresherRegistry, 'tep_refresher_unkeyed_invalidations_total', { level: 'unknown' }),
    ).toBeGreaterThanOrEqual(1)
    expect(await metricSum(refresherRegistry, 'tep_refresher_partition_pauses_total')).toBe(0)
    expect(await metricSum(refresherRegistry, 'tep_refresher_records_dead_lettered_total')).toBe(0)
    expect(await readTopic(kit.kafka, topics.dlq)).toEqual([])
  })

  it('a refresher started afterwards reads the recent items without a key back and keeps sweeping', async () => {
    const restarted = await startRefresher({
      kafka: serviceKafka,
      serde,
      client,
      invalidationsEnabled: true,
      maxAgeMs: MAX_AGE_MS,
      sweepIntervalMs: SWEEP_INTERVAL_MS,
      sweepMarginMs: SWEEP_MARGIN_MS,
      groupId: uniqueName('refresher-restarted'),
      transactionalIdPrefix: uniqueName('refresher-restarted-tx'),
      topics,
      logger,
      consumer: { sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 200 },
    })
    try {
      expect(restarted.ageBoundUntil()).toBe(0)
      await restarted.whenRescanned()
      // The item the first test published is at most a few seconds old: its mode is restored.
      expect(restarted.ageBoundUntil()).toBe(refresher!.ageBoundUntil())
    } finally {
      await restarted.stop()
    }
  })
})
