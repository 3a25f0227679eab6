/**
 * The shop/merchant table is built from the compacted topics before any raw
 * record is consumed: committed snapshots are used instead of API reads,
 * tombstones delete, aborted writes are never seen (read-committed), and with
 * invalidations off a snapshot older than 7 days counts as a miss.
 */
import { createMetricsRegistry } from '@tep/observability'
import { exampleMerchant, exampleShop, type Merchant, type Shop } from '@tep/schemas'
import { describe, expect, it } from 'vitest'
import { uniqueName } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import {
  consumedToEnd,
  createIngestTopics,
  fetchSamples,
  produceRaw,
  rawFromSample,
  readOutcomes,
  useIngestWorld,
  type SimSample,
} from './ingest-harness.ts'

const DAY = 24 * 3_600_000
const world = useIngestWorld(41)
const { kit, serde } = world

describe('the shop/merchant table of transaction-ingest', () => {
  it('is read from the compacted topics (committed only, tombstones applied, stale entries ignored without invalidations)', async () => {
    const topics = await createIngestTopics(kit, 'ingest-table', 3)
    const found = await fetchSamples(world.sim, 'card', 'found', 40, 9)
    // One sample per shop, so each shop's source is unambiguous.
    const byShop = new Map<string, SimSample>()
    for (const s of found) if (!byShop.has(s.expected.shopUid!)) byShop.set(s.expected.shopUid!, s)
    const samples = [...byShop.values()].slice(0, 12)
    expect(samples.length).toBe(12)
    const shopUid = (i: number) => samples[i]!.expected.shopUid!
    const merchantUid = (i: number) => samples[i]!.expected.merchantUid!
    const now = Date.now()
    const tableShop = (i: number, fetchedAt: number, url = `https://table.example/${i}`): Shop => ({
      ...exampleShop(shopUid(i)),
      merchantUid: merchantUid(i),
      url,
      fetchedAt,
    })
    const tableMerchant = (i: number): Merchant => ({
      ...exampleMerchant(merchantUid(i)),
      name: `Table merchant ${merchantUid(i)}`,
      fetchedAt: now,
    })

    // Shops 0..7 in the table; 0 is then deleted, 1 is 8 days old, 2 has a newer
    // version in an aborted transaction. 8..11 are not in the table at all.
    const shopCodec = serde.topic(topics.shops, 'Shop')
    const merchantCodec = serde.topic(topics.merchants, 'Merchant')
    const producer = kit.producer({
      transactionalId: uniqueName('table-writer'),
      idempotent: true,
      maxInFlightRequests: 1,
    })
    await producer.connect()
    const committed = await producer.transaction()
    const shopMessages = await Promise.all(
      [0, 1, 2, 3, 4, 5, 6, 7].map(async (i) => ({
        key: shopUid(i),
        value: await shopCodec.encode(tableShop(i, i === 1 ? now - 8 * DAY : now)),
      })),
    )
    const merchantMessages = await Promise.all(
      [0, 1, 2, 3, 4, 5, 6, 7].map(async (i) => ({
        key: merchantUid(i),
        value: await merchantCodec.encode(tableMerchant(i)),
      })),
    )
    await committed.send({
      topic: topics.shops,
      messages: [...shopMessages, { key: shopUid(0), value: null }],
    })
    await committed.send({ topic: topics.merchants, messages: merchantMessages })
    await committed.commit()
    const aborted = await producer.transaction()
    await aborted.send({
      topic: topics.shops,
      messages: [
        {
          key: shopUid(2),
          value: await shopCodec.encode(tableShop(2, now + 1, 'https://aborted.example/2')),
        },
      ],
    })
    await aborted.abort()

    const statsBefore = (await (await fetch(`${world.sim.url}/__admin/stats`)).json()) as {
      requests: { byOperation: Record<string, number> }
    }
    const ingest = await world.startIngest(topics, {
      lookupMode: 'batch',
      completeLookups: 'never',
      invalidationsEnabled: false,
      metricsRegistry: createMetricsRegistry({ service: 'ingest-table', defaultMetrics: false }),
    })
    // Started means caught up: the table holds what was committed, the aborted write is invisible.
    const table = ingest.readiness.snapshot().checks.table
    expect(table?.ready).toBe(true)
    expect(ingest.tables.shops.size).toBe(7)
    expect(ingest.tables.merchants.size).toBe(new Set([0, 1, 2, 3, 4, 5, 6, 7].map(merchantUid)).size)
    expect(ingest.tables.shops.get(shopUid(2))?.url).toBe('https://table.example/2')

    await produceRaw(
      kit,
      serde,
      topics.input,
      samples.map((s, i) => rawFromSample(s, `table-${i}`)),
    )
    const admin = kit.admin()
    await admin.connect()
    await waitFor(
      'every raw record to be consumed',
      () => consumedToEnd(admin, topics.groupId, topics.input),
      { timeoutMs: 60_000 },
    )

    const outcomes = await readOutcomes(kit.kafka, serde, topics)
    const result = (i: number) => outcomes.enriched.get(`table-${i}`)![0]!
    for (const i of [2, 3, 4, 5, 6, 7]) {
      expect(result(i).lookup?.shopSource, `shop ${i}`).toBe('TABLE')
      expect(result(i).shop?.url).toBe(`https://table.example/${i}`)
      expect(result(i).merchant?.name).toBe(`Table merchant ${merchantUid(i)}`)
    }
    // Deleted (0), older than 7 days with invalidations off (1), never in the table (8..11): read from the API.
    for (const i of [0, 1, 8, 9, 10, 11]) {
      expect(result(i).lookup?.shopSource, `shop ${i}`).toBe('API')
      expect(result(i).shop?.uid).toBe(shopUid(i))
      expect(result(i).shop?.url).not.toMatch(/table\.example/)
    }
    const stats = (await (await fetch(`${world.sim.url}/__admin/stats`)).json()) as {
      requests: { byOperation: Record<string, number> }
    }
    expect((stats.requests.byOperation.getShop ?? 0) - (statsBefore.requests.byOperation.getShop ?? 0)).toBe(
      6,
    )
    // What the API gave is in this instance's table now (until the refresher's version arrives).
    expect(ingest.tables.shops.get(shopUid(1))?.fetchedAt).toBeGreaterThan(now - DAY)
  })
})
