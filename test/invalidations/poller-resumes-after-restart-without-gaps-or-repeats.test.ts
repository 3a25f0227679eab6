import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { createEnrichmentClient, type EnrichmentClient } from '@tep/enrichment-client'
import { startEnrichmentSim, type EnrichmentSim } from '@tep/enrichment-sim'
import {
  enrichmentFeed,
  startInvalidationPoller,
  type InvalidationPollerHandle,
} from '@tep/invalidation-poller'
import { AvroSerde, createKafka, createSchemaRegistry } from '@tep/kafka'
import { createLogger } from '@tep/observability'
import type { Invalidation, InvalidationCursor } from '@tep/schemas'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'
import { waitFor } from '../support/wait-for.ts'

const logger = createLogger({ name: 'poller-test', level: 'silent' })
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
let child: ChildProcess | undefined

interface FeedItemJson {
  id: number
  level: string
  type: string
  key: string
}

async function admin(path: string, method: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`)
  return res.json()
}

/** Every item the simulator's feed holds (the pollers of each test start from its beginning). */
const allItems: FeedItemJson[] = []

/** Changes `n` things in the simulator (shop updates, rebrands, shop deletions) and returns the feed items they created. */
async function mutate(n: number): Promise<FeedItemJson[]> {
  const kinds = ['shopUpdate', 'shopUpdate', 'rebrand', 'deleteShop'] as const
  const items: FeedItemJson[] = []
  for (let i = 0; i < n; i++) {
    const answer = (await admin('/__admin/mutations', 'POST', { kind: kinds[i % kinds.length] })) as {
      items: FeedItemJson[]
    }
    items.push(...answer.items)
  }
  allItems.push(...items)
  return items
}

async function topics() {
  const items = uniqueName('invalidations')
  const cursor = uniqueName('invalidations-cursor')
  await kit.createTopics([items], 3)
  await kit.createTopics([cursor], 1, { 'cleanup.policy': 'compact' })
  return { items, cursor }
}

function startInProcess(
  t: { items: string; cursor: string },
  transactionalId: string,
  pageSize: number,
  onPage?: (lastItemId: number) => void,
): Promise<InvalidationPollerHandle> {
  return startInvalidationPoller({
    kafka: serviceKafka,
    serde,
    feed: enrichmentFeed(client),
    levels: ['shop', 'merchant', 'handle'],
    pageSize,
    pollIntervalMs: 3_600_000,
    startAt: new Date(0),
    transactionalId,
    topics: t,
    logger,
    backoff: { initialDelayMs: 20, maxDelayMs: 200 },
    ...(onPage === undefined ? {} : { onPageCommitted: ({ cursor }) => onPage(cursor.lastItemId) }),
  })
}

/** Resolves once the poller has committed the cursor `lastItemId` (or further). */
function reached(
  poller: InvalidationPollerHandle,
  lastItemId: number,
  pages: { wait: (id: number) => Promise<void> },
): Promise<void> {
  if ((poller.position()?.lastItemId ?? -1) >= lastItemId) return Promise.resolve()
  return pages.wait(lastItemId)
}

function pageWatcher() {
  const waiters: { id: number; resolve: () => void }[] = []
  return {
    onPage(lastItemId: number) {
      for (const w of waiters.filter((w) => lastItemId >= w.id)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      }
    },
    wait(id: number) {
      return new Promise<void>((resolve) => waiters.push({ id, resolve }))
    },
  }
}

/**
 * What the items topic holds once at least `expected` records are readable.
 * A commit is answered once the coordinator has logged it; the markers reach
 * the partitions a moment later, and until then a read-committed reader stops
 * before that transaction. More than `expected` records still shows (and fails
 * the exactly-once check).
 */
async function publishedItems(
  topic: string,
  expected: number,
): Promise<{ partition: number; value: Invalidation; key: string | null }[]> {
  const codec = serde.topic(topic, 'Invalidation')
  const records = await waitFor(`${expected} committed items on ${topic}`, async () => {
    const read = await readTopic(kit.kafka, topic)
    return read.length >= expected ? read : undefined
  })
  return Promise.all(
    records.map(async (r) => ({ partition: r.partition, key: r.key?.toString('utf8') ?? null, value: await codec.decode(r.value) })),
  )
}

async function lastCursor(topic: string): Promise<InvalidationCursor | undefined> {
  const codec = serde.topic(topic, 'InvalidationCursor')
  const records = await readTopic(kit.kafka, topic)
  const last = records.at(-1)
  return last === undefined ? undefined : codec.decode(last.value)
}

/** Every feed item exactly once, each partition in feed order, keyed by its entity. */
function expectExactlyOnceInOrder(
  published: { partition: number; value: Invalidation; key: string | null }[],
  feed: FeedItemJson[],
): void {
  const ids = published.map((p) => p.value.itemId)
  expect(ids.length).toBe(feed.length)
  expect(new Set(ids).size).toBe(ids.length)
  expect([...ids].sort((a, b) => a - b)).toEqual(feed.map((f) => f.id).sort((a, b) => a - b))
  const byId = new Map(feed.map((f) => [f.id, f]))
  for (const p of published) {
    const item = byId.get(p.value.itemId)!
    expect({ level: p.value.level, type: p.value.type, entityKey: p.value.entityKey, key: p.key }).toEqual({
      level: item.level,
      type: item.type,
      entityKey: item.key,
      key: item.key,
    })
  }
  for (const partition of new Set(published.map((p) => p.partition))) {
    const inPartition = published.filter((p) => p.partition === partition).map((p) => p.value.itemId)
    expect(inPartition).toEqual([...inPartition].sort((a, b) => a - b))
  }
}

function spawnPoller(t: { items: string; cursor: string }, transactionalId: string, pageSize: number) {
  const script = fileURLToPath(new URL('./poller-process.ts', import.meta.url))
  const proc = spawn(process.execPath, [script], {
    env: {
      ...process.env,
      KAFKA_BROKERS: inject('kafkaBrokers').join(','),
      SCHEMA_REGISTRY_URL: inject('registryUrl'),
      ENRICHMENT_API_URL: sim.url,
      ENRICHMENT_CLIENT_ID: 'sim-client',
      ENRICHMENT_CLIENT_SECRET: 'sim-secret',
      ITEMS_TOPIC: t.items,
      CURSOR_TOPIC: t.cursor,
      TRANSACTIONAL_ID: transactionalId,
      PAGE_SIZE: String(pageSize),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  proc.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const lines = createInterface({ input: proc.stdout! })
  const committed = (atLeast: number) =>
    new Promise<number>((resolve, reject) => {
      const onLine = (line: string) => {
        const parsed = JSON.parse(line) as { lastItemId?: number }
        if (parsed.lastItemId !== undefined && parsed.lastItemId >= atLeast) {
          lines.off('line', onLine)
          resolve(parsed.lastItemId)
        }
      }
      lines.on('line', onLine)
      proc.once('exit', (code) =>
        reject(new Error(`poller process exited (${code}) before committing item ${atLeast}: ${stderr}`)),
      )
    })
  return { proc, committed }
}

beforeAll(async () => {
  sim = await startEnrichmentSim({ shops: 400, merchants: 40 })
  client = createEnrichmentClient({
    baseUrl: sim.url,
    credentials: { type: 'oauth', clientId: 'sim-client', clientSecret: 'sim-secret' },
    retry: { retries: 1, initialDelayMs: 10, maxDelayMs: 50 },
  })
})

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) child.kill('SIGKILL')
  await client?.close()
  await sim?.close()
  await kit.disconnectAll()
})

describe('invalidation poller', () => {
  it('resumes after a graceful stop and after SIGKILL without gaps or repeats', async () => {
    const t = await topics()
    const transactionalId = uniqueName('poller-tx')
    // Starts from the first item of the feed: whatever other tests left there counts too.
    await mutate(12)
    const feed = [...allItems]

    // 1. Graceful stop in the middle of the feed.
    const pages1 = pageWatcher()
    const first = await startInProcess(t, transactionalId, 2, (id) => pages1.onPage(id))
    await reached(first, feed[5]!.id, pages1)
    await first.stop()
    const stoppedAt = first.position()!.lastItemId
    expect(stoppedAt).toBeLessThan(feed.at(-1)!.id)
    expect((await lastCursor(t.cursor))?.lastItemId).toBe(stoppedAt)

    // 2. More changes arrive; a poller process is killed with SIGKILL mid-feed (slow API, so it is mid-feed).
    feed.push(...(await mutate(16)))
    await admin('/__admin/faults', 'PUT', { latencyMs: 60 })
    const spawned = spawnPoller(t, transactionalId, 2)
    child = spawned.proc
    await spawned.committed(stoppedAt + 8)
    spawned.proc.kill('SIGKILL')
    await once(spawned.proc, 'exit')
    await admin('/__admin/faults', 'DELETE', {})
    const killedAt = (await lastCursor(t.cursor))!.lastItemId
    expect(killedAt).toBeGreaterThan(stoppedAt)
    expect(killedAt).toBeLessThan(feed.at(-1)!.id)

    // 3. Restart (fencing whatever the killed process left open), with API failures on the way: drains to the end.
    feed.push(...(await mutate(6)))
    await admin('/__admin/faults', 'PUT', {
      errorRate: 1,
      errorStatus: 503,
      count: 3,
      pathPrefix: '/v5/invalidations',
    })
    const pages3 = pageWatcher()
    const third = await startInProcess(t, transactionalId, 5, (id) => pages3.onPage(id))
    await reached(third, feed.at(-1)!.id, pages3)
    await third.stop()

    expectExactlyOnceInOrder(await publishedItems(t.items, feed.length), feed)
    expect((await lastCursor(t.cursor))?.lastItemId).toBe(feed.at(-1)!.id)
  })

  it('a second instance fences the first and carries on where it stopped', async () => {
    const t = await topics()
    const transactionalId = uniqueName('poller-tx')
    await mutate(10)
    const feed = allItems
    const pagesA = pageWatcher()
    const a = await startInProcess(t, transactionalId, 3, (id) => pagesA.onPage(id))
    await reached(a, feed.at(-1)!.id, pagesA)

    const pagesB = pageWatcher()
    const b = await startInProcess(t, transactionalId, 3, (id) => pagesB.onPage(id))
    expect(b.position()?.lastItemId).toBe(feed.at(-1)!.id)
    await mutate(4)
    // The first instance wakes up, finds new items, and its commit is refused.
    a.pollNow()
    await expect(a.done).rejects.toMatchObject({ code: 'INVALIDATION_POLLER_FENCED' })
    b.pollNow()
    await reached(b, feed.at(-1)!.id, pagesB)
    await b.stop()

    expectExactlyOnceInOrder(await publishedItems(t.items, feed.length), feed)
  })
})
