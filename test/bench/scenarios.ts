import { createEnrichmentClient, type CardTransactionInput } from '@tep/enrichment-client'
import { PRODUCER_DEFAULTS, TOPICS } from '@tep/kafka'
import { generateRawEvents } from '@tep/sample-traffic'
import type { RawTransaction, Shop, Merchant } from '@tep/schemas'
import { SimDataset } from '@tep/sim-data'
import { createTopic, observe, percentile, processMemoryMb, produceAll, spawnNode, waitForHttpOk, type BenchContext } from './harness.ts'

export const SIM_CREDENTIALS = { clientId: 'bench-client', clientSecret: 'bench-secret' }
const PARTITIONS = 6

export interface SimHandle {
  url: string
  stop(): Promise<void>
}

export async function startSim(ctx: BenchContext, port: number, latencyMs: number): Promise<SimHandle> {
  const sim = spawnNode(ctx, 'enrichment-sim', 'simulators/enrichment-sim/src/main.ts', ['--port', String(port), '--mutations', '0', '--latency-ms', String(latencyMs)], {
    SIM_CLIENT_ID: SIM_CREDENTIALS.clientId,
    SIM_CLIENT_SECRET: SIM_CREDENTIALS.clientSecret,
    LOG_LEVEL: 'warn',
  })
  const url = `http://127.0.0.1:${port}`
  await waitForHttpOk(`${url}/__admin/stats`)
  return { url, stop: () => sim.kill() }
}

/** Card raw events (batch lookups apply to cards), Avro-encoded, on a fresh topic. */
export async function seedRawTopic(ctx: BenchContext, name: string, count: number): Promise<{ topic: string; events: RawTransaction[] }> {
  const topic = await createTopic(ctx, `bench.${ctx.runId}.${name}.raw`, PARTITIONS)
  const codec = ctx.serde.topic(topic, 'RawTransaction')
  const events = generateRawEvents(new SimDataset(), { count, seed: 7, kind: 'card', idPrefix: `${ctx.runId}-${name}` }).map((e) => e.raw)
  await codec.register()
  await produceAll(
    ctx,
    topic,
    events.map((e) => ({ key: e.transactionId, value: codec.encodeSync(e) })),
  )
  return { topic, events }
}

export interface ThroughputResult {
  events: number
  seconds: number
  eventsPerSecond: number
}

/**
 * Throughput from the moment the processor starts consuming (group joined, or
 * the ingest process ready) to the last output seen by a read-committed reader.
 * Outputs arrive in bursts (whole fetches, whole transactions), so timing from
 * the first arrival would leave out the work before it.
 */
function throughput(count: number, firstAt: number, lastAt: number): ThroughputResult {
  const seconds = Math.max(0.001, (lastAt - firstAt) / 1000)
  return { events: count, seconds: Math.round(seconds * 100) / 100, eventsPerSecond: Math.round(count / seconds) }
}

/** Zero-work KafkaJS pass-through: consume and produce the same bytes, offsets auto-committed. */
export async function passThrough(ctx: BenchContext, count: number): Promise<ThroughputResult> {
  const { topic } = await seedRawTopic(ctx, 'passthrough', count)
  const out = await createTopic(ctx, `bench.${ctx.runId}.passthrough.out`, PARTITIONS)
  const watcher = await observe(ctx, [out], { expected: count })
  const producer = ctx.kafka.producer({ ...PRODUCER_DEFAULTS, idempotent: true })
  await producer.connect()
  const consumer = ctx.kafka.consumer({ groupId: `bench-pass-${ctx.runId}`, maxWaitTimeInMs: 50 })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  const started = joinedAt(consumer)
  await consumer.run({
    partitionsConsumedConcurrently: 4,
    eachBatch: async ({ batch }) => {
      await producer.send({ topic: out, messages: batch.messages.map((m) => ({ key: m.key, value: m.value })) })
    },
  })
  try {
    const o = await watcher.done
    return throughput(o.count, await started, o.lastAt)
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect(), watcher.stop()])
  }
}

function joinedAt(consumer: import('kafkajs').Consumer): Promise<number> {
  return new Promise((resolve) => {
    const off = consumer.on(consumer.events.GROUP_JOIN, () => {
      off()
      resolve(Date.now())
    })
  })
}

async function readyAt(metricsPort: number): Promise<number> {
  await waitForHttpOk(`http://127.0.0.1:${metricsPort}/readyz`, 300_000, 10)
  return Date.now()
}

function cardInput(raw: RawTransaction): CardTransactionInput {
  const input: Record<string, string> = { amount: raw.amount, currency: raw.currency, dateTime: new Date(raw.occurredAt).toISOString() }
  for (const [k, v] of Object.entries(raw.card ?? {})) if (v !== null && k !== 'street' && k !== 'processingCode' && k !== 'posEntryMode' && !k.startsWith('transaction') && k !== 'localDateTime') input[k] = v
  return input as CardTransactionInput
}

/** The naive consumer: one await per message (decode, look up, produce), no batching, no concurrency. */
export async function naive(ctx: BenchContext, sim: SimHandle, count: number): Promise<ThroughputResult> {
  const { topic } = await seedRawTopic(ctx, 'naive', count)
  const out = await createTopic(ctx, `bench.${ctx.runId}.naive.out`, PARTITIONS)
  const codec = ctx.serde.topic(topic, 'RawTransaction')
  const client = createEnrichmentClient({ baseUrl: sim.url, credentials: { type: 'oauth', ...SIM_CREDENTIALS } })
  const watcher = await observe(ctx, [out], { expected: count })
  const producer = ctx.kafka.producer({ ...PRODUCER_DEFAULTS, idempotent: true })
  await producer.connect()
  const consumer = ctx.kafka.consumer({ groupId: `bench-naive-${ctx.runId}`, maxWaitTimeInMs: 50 })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  const started = joinedAt(consumer)
  await consumer.run({
    eachMessage: async ({ message }) => {
      const raw = await codec.decode(message.value)
      const found = await client.findByCardTransaction(cardInput(raw)).catch(() => null)
      await producer.send({ topic: out, messages: [{ key: message.key, value: Buffer.from(JSON.stringify({ id: raw.transactionId, handle: found?.handle ?? null })) }] })
    },
  })
  try {
    const o = await watcher.done
    return throughput(o.count, await started, o.lastAt)
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect(), watcher.stop()])
    await client.close()
  }
}

export interface IngestTopics {
  raw: string
  enriched: string
  dlq: string
  fetched: string
  shops: string
  merchants: string
}

/** Fresh output topics per scenario; the table topics are shared (ingest only reads them). */
export async function ingestTopics(ctx: BenchContext, name: string, raw: string | undefined, tables: TableTopics): Promise<IngestTopics> {
  const p = `bench.${ctx.runId}.${name}`
  return {
    raw: raw ?? (await createTopic(ctx, `${p}.raw`, PARTITIONS)),
    enriched: await createTopic(ctx, `${p}.enriched`, PARTITIONS),
    dlq: await createTopic(ctx, `${p}.dlq`, PARTITIONS),
    fetched: await createTopic(ctx, `${p}.fetched`, PARTITIONS),
    ...tables,
  }
}

export function startIngest(ctx: BenchContext, sim: SimHandle, topics: IngestTopics, mode: 'single' | 'batch', metricsPort: number, extraEnv: NodeJS.ProcessEnv = {}) {
  return spawnNode(ctx, `ingest-${mode}`, 'services/transaction-ingest/src/main.ts', [], {
    KAFKA_BROKERS: ctx.brokers.join(','),
    SCHEMA_REGISTRY_URL: ctx.registryUrl,
    ENRICHMENT_API_URL: sim.url,
    ENRICHMENT_CLIENT_ID: SIM_CREDENTIALS.clientId,
    ENRICHMENT_CLIENT_SECRET: SIM_CREDENTIALS.clientSecret,
    INGEST_LOOKUP_MODE: mode,
    INGEST_INPUT_TOPIC: topics.raw,
    INGEST_ENRICHED_TOPIC: topics.enriched,
    INGEST_DLQ_TOPIC: topics.dlq,
    INGEST_FETCHED_TOPIC: topics.fetched,
    INGEST_SHOPS_TOPIC: topics.shops,
    INGEST_MERCHANTS_TOPIC: topics.merchants,
    INGEST_GROUP_ID: `bench-ingest-${ctx.runId}-${topics.raw}`,
    INGEST_TRANSACTIONAL_ID_PREFIX: `bench-ingest-${ctx.runId}-${topics.raw}`,
    METRICS_PORT: String(metricsPort),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    ...extraEnv,
  })
}

/** transaction-ingest (a real process) over pre-produced card events. */
export async function ingestThroughput(ctx: BenchContext, sim: SimHandle, tables: TableTopics, count: number, mode: 'single' | 'batch', metricsPort: number): Promise<ThroughputResult> {
  const { topic } = await seedRawTopic(ctx, `ingest-${mode}`, count)
  const topics = await ingestTopics(ctx, `ingest-${mode}`, topic, tables)
  const watcher = await observe(ctx, [topics.enriched, topics.dlq], { expected: count })
  const ingest = startIngest(ctx, sim, topics, mode, metricsPort)
  try {
    const started = await readyAt(metricsPort)
    const o = await watcher.done
    return throughput(o.count, started, o.lastAt)
  } finally {
    await ingest.kill()
    await watcher.stop()
  }
}

export interface LatencyResult {
  targetRate: number
  events: number
  p50Ms: number
  p95Ms: number
  p99Ms: number
  maxMs: number
}

/** End-to-end latency (raw produced → enriched visible to a read-committed consumer) at a steady rate. */
export async function latency(ctx: BenchContext, sim: SimHandle, tables: TableTopics, ratePerSecond: number, seconds: number, metricsPort: number): Promise<LatencyResult> {
  const topics = await ingestTopics(ctx, 'latency', undefined, tables)
  const rawCodec = ctx.serde.topic(topics.raw, 'RawTransaction')
  const enrichedCodec = ctx.serde.topic(topics.enriched, 'EnrichedTransaction')
  await rawCodec.register()
  const total = ratePerSecond * seconds
  const events = generateRawEvents(new SimDataset(), { count: total, seed: 11, kind: 'card', idPrefix: `${ctx.runId}-lat` }).map((e) => e.raw)
  const latencies: number[] = []
  const pending: Promise<void>[] = []
  const watcher = await observe(ctx, [topics.enriched, topics.dlq], {
    expected: total,
    onMessage: (topic, _key, value, arrivedAt) => {
      if (topic !== topics.enriched) return
      pending.push(enrichedCodec.decode(value).then((e) => void latencies.push(arrivedAt - e.raw.receivedAt)))
    },
  })
  const ingest = startIngest(ctx, sim, topics, 'batch', metricsPort)
  await waitForHttpOk(`http://127.0.0.1:${metricsPort}/readyz`)
  const producer = ctx.kafka.producer({ ...PRODUCER_DEFAULTS, idempotent: true })
  await producer.connect()
  try {
    // Warm-up is excluded: the first second's events are produced but not measured.
    const tickMs = 10
    const perTick = Math.max(1, Math.round((ratePerSecond * tickMs) / 1000))
    const started = Date.now()
    let sent = 0
    while (sent < total) {
      const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * ratePerSecond) + perTick)
      const batch = events.slice(sent, due).map((e) => {
        e.receivedAt = Date.now()
        return { key: e.transactionId, value: rawCodec.encodeSync(e) }
      })
      sent = due
      if (batch.length) void producer.send({ topic: topics.raw, messages: batch })
      await new Promise((r) => setTimeout(r, tickMs))
    }
    await watcher.done
    await Promise.all(pending)
  } finally {
    await producer.disconnect()
    await ingest.kill()
    await watcher.stop()
  }
  const measured = latencies.slice(ratePerSecond).sort((a, b) => a - b)
  return { targetRate: ratePerSecond, events: measured.length, p50Ms: percentile(measured, 50), p95Ms: percentile(measured, 95), p99Ms: percentile(measured, 99), maxMs: measured.at(-1) ?? Number.NaN }
}

export interface CrashResult {
  events: number
  kills: number
  lost: number
  duplicated: number
  invariantHolds: boolean
}

/** kill -9 the ingest process several times during a run; then every raw event must have exactly one outcome. */
export async function crash(ctx: BenchContext, sim: SimHandle, tables: TableTopics, count: number, kills: number, metricsPort: number): Promise<CrashResult> {
  const { topic, events } = await seedRawTopic(ctx, 'crash', count)
  const topics = await ingestTopics(ctx, 'crash', topic, tables)
  const watcher = await observe(ctx, [topics.enriched, topics.dlq], { expected: count, idleTimeoutMs: 180_000 })
  let ingest = startIngest(ctx, sim, topics, 'batch', metricsPort)
  for (let k = 0; k < kills; k++) {
    const target = Math.floor(((k + 1) * count) / (kills + 2))
    while (watcher.observation.count < target) await new Promise((r) => setTimeout(r, 50))
    await ingest.kill('SIGKILL')
    ctx.say(`  kill -9 #${k + 1} after ${watcher.observation.count} outcomes; restarting`)
    ingest = startIngest(ctx, sim, topics, 'batch', metricsPort)
  }
  try {
    await watcher.done
    // Let anything extra (a duplicate) surface before judging.
    await new Promise((r) => setTimeout(r, 3_000))
  } finally {
    await ingest.kill()
    await watcher.stop()
  }
  const seen = watcher.observation.keys
  const lost = events.filter((e) => !seen.has(e.transactionId)).length
  const duplicated = [...seen.values()].filter((n) => n > 1).length
  return { events: count, kills, lost, duplicated, invariantHolds: lost === 0 && duplicated === 0 }
}

export interface MemoryResult {
  shops: number
  merchants: number
  rssMb: number
  peakRssMb: number
  loadSeconds: number
}

function shopEvent(s: ReturnType<SimDataset['shop']>, fetchedAt: number): Shop {
  return {
    uid: s.uid,
    type: s.type,
    tags: [...s.tags],
    merchantUid: s.merchantUid,
    category: { name: s.category.name, logo: s.category.logo },
    location: {
      address: { street: s.address.street, city: s.address.city, zip: s.address.zip, country: s.address.country, areas: { ...s.address.areas } },
      coordinates: s.coordinates ? { type: s.coordinates.type, lat: s.coordinates.lat, long: s.coordinates.long } : null,
    },
    url: s.url,
    googlePlaceId: s.googlePlaceId ?? null,
    fetchedAt,
    invalidationItemId: null,
  }
}

function merchantEvent(m: ReturnType<SimDataset['merchant']>, fetchedAt: number): Merchant {
  return { uid: m.uid, name: m.name, logo: m.logo, url: m.url, categoryName: m.category.name, fetchedAt, invalidationItemId: null }
}

export interface TableTopics {
  shops: string
  merchants: string
}

/**
 * Compacted shop and merchant topics holding every entity of `data`, as the
 * refresher would have written them: the steady state in which ingest resolves
 * details from its table instead of the API.
 */
export async function seedTables(ctx: BenchContext, name: string, data: SimDataset): Promise<TableTopics> {
  const topics = {
    shops: await createTopic(ctx, `bench.${ctx.runId}.${name}.shops`, PARTITIONS, true),
    merchants: await createTopic(ctx, `bench.${ctx.runId}.${name}.merchants`, PARTITIONS, true),
  }
  const shopCodec = ctx.serde.topic(topics.shops, 'Shop')
  const merchantCodec = ctx.serde.topic(topics.merchants, 'Merchant')
  await Promise.all([shopCodec.register(), merchantCodec.register()])
  const now = Date.now()
  const chunk = 50_000
  for (let i = 0; i < data.shopCount; i += chunk) {
    const messages = []
    for (let j = i; j < Math.min(data.shopCount, i + chunk); j++) {
      const s = data.shop(j)
      messages.push({ key: s.uid, value: shopCodec.encodeSync(shopEvent(s, now)) })
    }
    await produceAll(ctx, topics.shops, messages)
    if (data.shopCount > chunk) ctx.say(`  shops produced: ${Math.min(data.shopCount, i + chunk)}/${data.shopCount}`)
  }
  const merchantMessages = []
  for (let m = 0; m < data.merchantCount; m++) {
    const mm = data.merchant(m)
    merchantMessages.push({ key: mm.uid, value: merchantCodec.encodeSync(merchantEvent(mm, now)) })
  }
  await produceAll(ctx, topics.merchants, merchantMessages)
  return topics
}

/** RSS of one ingest process whose table holds `shops` shops (read from its compacted topic). */
export async function memory(ctx: BenchContext, sim: SimHandle, shops: number, metricsPort: number): Promise<MemoryResult> {
  const merchants = Math.max(1, Math.round(shops / 10))
  const tables = await seedTables(ctx, 'memory', new SimDataset({ shops, merchants }))
  const topics = await ingestTopics(ctx, 'memory', undefined, tables)
  const started = Date.now()
  const ingest = startIngest(ctx, sim, topics, 'batch', metricsPort)
  try {
    await waitForHttpOk(`http://127.0.0.1:${metricsPort}/readyz`, 600_000)
    const loadSeconds = (Date.now() - started) / 1000
    // Settle: let the loader's garbage be collected before reading RSS.
    await new Promise((r) => setTimeout(r, 5_000))
    const mem = processMemoryMb(ingest.child.pid!)
    return { shops, merchants, ...mem, loadSeconds: Math.round(loadSeconds * 10) / 10 }
  } finally {
    await ingest.kill()
  }
}

export { TOPICS }
