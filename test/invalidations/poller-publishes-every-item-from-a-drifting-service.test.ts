/**
 * Issue 33: the invalidation poller against the enrichment simulator in
 * contract-drift mode: a service that refuses `level` with a 400, has no
 * item/range (404) or answers it in another shape, and sends `currentTime`,
 * `type`, `lastId` and `hasMore` in other JSON types with unknown fields. The
 * poller must keep running, publish every item the simulator invalidated after
 * its start exactly once, move its cursor to the feed's head, and count the drift.
 */
import { createEnrichmentClient, type EnrichmentClient } from '@tep/enrichment-client'
import { startEnrichmentSim, type DriftOverrides, type EnrichmentSim } from '@tep/enrichment-sim'
import { enrichmentFeed, startInvalidationPoller, type InvalidationPollerHandle } from '@tep/invalidation-poller'
import { AvroSerde, createKafka, createSchemaRegistry } from '@tep/kafka'
import { createContractDriftRecorder, createLogger, createMetricsRegistry, type ContractDriftListener } from '@tep/observability'
import type { Invalidation } from '@tep/schemas'
import { afterEach, describe, expect, inject, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'
import { waitFor } from '../support/wait-for.ts'

const logger = createLogger({ name: 'drift-test', level: 'silent' })
const kit = createKafkaTestKit()
const serviceKafka = createKafka({ brokers: inject('kafkaBrokers'), clientId: uniqueName('services'), logLevel: 'error' })
const serde = new AvroSerde({ registry: createSchemaRegistry({ url: inject('registryUrl') }) })

interface SimItem {
  id: number
  level: string
  type: string
  key: string
}

const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close().catch(() => undefined)
})

async function drifting(seed: number, overrides: DriftOverrides) {
  const sim: EnrichmentSim = await startEnrichmentSim({ seed: 5, shops: 400, merchants: 40, contractDrift: { seed, overrides } })
  cleanup.push(() => sim.close())
  const registry = createMetricsRegistry({ service: 'drift-test', defaultMetrics: false })
  const drift = createContractDriftRecorder({ registry, logger })
  const client: EnrichmentClient = createEnrichmentClient({
    baseUrl: sim.url,
    credentials: { type: 'oauth', clientId: 'sim-client', clientSecret: 'sim-secret' },
    onContractDrift: drift.listener,
  })
  cleanup.push(() => client.close())
  const mutate = async (n: number): Promise<SimItem[]> => {
    const kinds = ['shopUpdate', 'rebrand', 'remap', 'deleteShop'] as const
    const items: SimItem[] = []
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${sim.url}/__admin/mutations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: kinds[i % kinds.length] }),
      })
      if (!res.ok) throw new Error(`mutation answered ${res.status}: ${await res.text()}`)
      items.push(...((await res.json()) as { items: SimItem[] }).items)
    }
    return items
  }
  return { sim, client, drift, registry, mutate }
}

async function startPoller(client: EnrichmentClient, listener: ContractDriftListener, startAt: Date, registry: ReturnType<typeof createMetricsRegistry>) {
  const topics = { items: uniqueName('invalidations'), cursor: uniqueName('invalidations-cursor') }
  await kit.createTopics([topics.items], 3)
  await kit.createTopics([topics.cursor], 1, { 'cleanup.policy': 'compact' })
  const poller: InvalidationPollerHandle = await startInvalidationPoller({
    kafka: serviceKafka,
    serde,
    feed: enrichmentFeed(client),
    levels: ['shop', 'merchant', 'handle'],
    pageSize: 4,
    pollIntervalMs: 3_600_000,
    startAt,
    transactionalId: uniqueName('drift-poller'),
    topics,
    logger,
    registry,
    onContractDrift: listener,
    backoff: { initialDelayMs: 20, maxDelayMs: 200 },
  })
  cleanup.push(() => poller.stop())
  return { poller, topics }
}

async function published(topic: string, expected: number): Promise<Invalidation[]> {
  const codec = serde.topic(topic, 'Invalidation')
  const records = await waitFor(`${expected} committed items on ${topic}`, async () => {
    const read = await readTopic(kit.kafka, topic)
    return read.length >= expected ? read : undefined
  })
  return Promise.all(records.map((r) => codec.decode(r.value)))
}

function expectEveryItemOnce(items: Invalidation[], feed: SimItem[]): void {
  const ids = items.map((i) => i.itemId).sort((a, b) => a - b)
  expect(ids).toEqual(feed.map((f) => f.id).sort((a, b) => a - b))
  const byId = new Map(feed.map((f) => [f.id, f]))
  for (const item of items) {
    const sim = byId.get(item.itemId)!
    expect({ level: item.level, entityKey: item.entityKey }).toEqual({ level: sim.level, entityKey: sim.key })
  }
}

describe('the invalidation poller against a service that drifts from the modelled contract', () => {
  it('refused level (bare 400) and item/range 404: starts at the feed head, publishes every later item once, counts the drift', async () => {
    const { drift, client, registry, mutate, sim } = await drifting(11, { level: 'refused-bare', itemRange: 'not-found' })
    const before = await mutate(6)
    const { poller, topics } = await startPoller(client, drift.listener, new Date(), registry)
    expect(poller.position()?.lastItemId).toBe(before.at(-1)!.id)

    const after = await mutate(23)
    poller.pollNow()
    const items = await published(topics.items, after.length)
    expectEveryItemOnce(items, after)
    await waitFor('the cursor at the feed head', async () => (poller.position()?.lastItemId === after.at(-1)!.id ? true : undefined))

    const seen = [...drift.seen().keys()]
    expect(seen).toEqual(
      expect.arrayContaining(['enrichment invalidations level param-refused', 'enrichment invalidations item/range operation-missing']),
    )
    // The per-answer shapes (other JSON types, unknown fields) were served and tolerated.
    expect(sim.driftDrawn!().length).toBeGreaterThan(8)
    expect(seen.some((k) => / (type|absent|unknown-field)$/.test(k))).toBe(true)
    const metrics = await registry.metrics()
    expect(metrics).toMatch(/tep_api_contract_drift_total\{api="enrichment",operation="invalidations",field="level",kind="param-refused"[^}]*\} 1/)
  })

  it('named level refusal and an unreadable item/range with a start moment in the past: reads the whole feed from id 0', async () => {
    const { drift, client, registry, mutate } = await drifting(12, { level: 'refused-named', itemRange: 'other-shape' })
    const before = await mutate(9)
    const { poller, topics } = await startPoller(client, drift.listener, new Date(Date.now() - 7 * 86_400_000), registry)
    const items = await published(topics.items, before.length)
    expectEveryItemOnce(items, before)
    await waitFor('the cursor at the feed head', async () => (poller.position()?.lastItemId === before.at(-1)!.id ? true : undefined))
    expect([...drift.seen().keys()]).toEqual(
      expect.arrayContaining(['enrichment invalidations level param-refused', 'enrichment invalidations item/range unreadable']),
    )
  })
})
