import { createRecordProducer, TOPICS } from '@tep/kafka'
import { INGEST_NODE_OPTIONS } from '@tep/transaction-ingest'
import { generateRawEvents } from '@tep/sample-traffic'
import { SimDataset } from '@tep/sim-data'
import { CpuMeter, perEvent } from './cpu.ts'
import { createTopic, observe, percentile, spawnNode, untilCommitted, waitForHttpOk, type BenchContext } from './harness.ts'
import { PARTITIONS, SIM_CREDENTIALS, seedRawTopic, throughput, type SimHandle, type ThroughputResult } from './processors.ts'
import type { TableTopics } from './table-scenarios.ts'

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

async function readyAt(metricsPort: number): Promise<number> {
  await waitForHttpOk(`http://127.0.0.1:${metricsPort}/readyz`, 300_000, 10)
  return Date.now()
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
    shops: tables.shops,
    merchants: tables.merchants,
  }
}

/** The ingest service as its own process. */
export function startIngest(ctx: BenchContext, sim: SimHandle, topics: IngestTopics, mode: 'single' | 'batch', metricsPort: number, extraEnv: NodeJS.ProcessEnv = {}) {
  return spawnNode(ctx, `ingest-${mode}`, 'services/transaction-ingest/src/main.ts', [], {
    // As the service is deployed (compose, k8s, npm start): services/transaction-ingest/README.md, "Runtime".
    NODE_OPTIONS: INGEST_NODE_OPTIONS,
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
  const name = `ingest-${mode}`
  const { topic } = await seedRawTopic(ctx, name, count)
  const topics = await ingestTopics(ctx, name, topic, tables)
  const ingest = startIngest(ctx, sim, topics, mode, metricsPort)
  const cpu = new CpuMeter()
  try {
    const started = await readyAt(metricsPort)
    cpu.start(ingest.child.pid)
    const o = await untilCommitted(ctx, [topics.enriched, topics.dlq], count)
    cpu.stop()
    if (o.count !== count) throw new Error(`${name}: ${o.count} outcomes for ${count} raw events`)
    return throughput(o.count, started, o.lastAt, cpu.totalUs)
  } finally {
    await ingest.kill()
  }
}

export interface LatencyResult {
  targetRate: number
  /** Outcomes per second over the run (close to targetRate when the ingest keeps up). */
  eventsPerSecond: number
  cpuUsPerEvent: number
  events: number
  /** Of the events produced after the warm-up (the JIT and connections are warm: steady state). */
  p50Ms: number
  p95Ms: number
  p99Ms: number
  maxMs: number
  warmupSeconds: number
  /** p99 of every event, the warm-up included, for comparison. */
  p99MsWithWarmup: number
}

/** End-to-end latency (raw produced → enriched visible to a read-committed consumer) at a steady rate. */
export async function latency(ctx: BenchContext, sim: SimHandle, tables: TableTopics, ratePerSecond: number, seconds: number, metricsPort: number, warmupSeconds = 5): Promise<LatencyResult> {
  const topics = await ingestTopics(ctx, 'latency', undefined, tables)
  const rawCodec = ctx.serde.topic(topics.raw, 'RawTransaction')
  const enrichedCodec = ctx.serde.topic(topics.enriched, 'EnrichedTransaction')
  await rawCodec.register()
  // The warm-up runs at the same rate before the measured seconds.
  const total = ratePerSecond * (seconds + warmupSeconds)
  const events = generateRawEvents(new SimDataset(), { count: total, seed: 11, kind: 'card', idPrefix: `${ctx.runId}-lat` }).map((e) => e.raw)
  const latencies: { producedAt: number; ms: number }[] = []
  const pending: Promise<void>[] = []
  const watcher = await observe(ctx, [topics.enriched, topics.dlq], {
    expected: total,
    onMessage: (topic, _key, value, arrivedAt) => {
      if (topic !== topics.enriched) return
      pending.push(enrichedCodec.decode(value).then((e) => void latencies.push({ producedAt: e.raw.receivedAt, ms: arrivedAt - e.raw.receivedAt })))
    },
  })
  const ingest = startIngest(ctx, sim, topics, 'batch', metricsPort)
  await waitForHttpOk(`http://127.0.0.1:${metricsPort}/readyz`)
  const producer = createRecordProducer(ctx.kafka)
  const cpu = new CpuMeter()
  let span: { from: number; to: number } | undefined
  try {
    cpu.start(ingest.child.pid)
    // Events of the warm-up are produced like the others but not measured.
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
      if (batch.length) void producer.send(topics.raw, batch)
      await new Promise((r) => setTimeout(r, tickMs))
    }
    const o = await watcher.done
    cpu.stop()
    span = { from: started, to: o.lastAt }
    await Promise.all(pending)
  } finally {
    await producer.close()
    await ingest.kill()
    await watcher.stop()
  }
  const steadyFrom = (span?.from ?? 0) + warmupSeconds * 1000
  const measured = latencies.filter((l) => l.producedAt >= steadyFrom).map((l) => l.ms).sort((a, b) => a - b)
  const all = latencies.map((l) => l.ms).sort((a, b) => a - b)
  return {
    targetRate: ratePerSecond,
    eventsPerSecond: span === undefined ? Number.NaN : Math.round(total / Math.max(0.001, (span.to - span.from) / 1000)),
    cpuUsPerEvent: perEvent(cpu.totalUs, total),
    events: measured.length, p50Ms: percentile(measured, 50), p95Ms: percentile(measured, 95), p99Ms: percentile(measured, 99), maxMs: measured.at(-1) ?? Number.NaN,
    warmupSeconds, p99MsWithWarmup: percentile(all, 99) }
}

export interface CrashResult {
  events: number
  /** Outcomes per second from the first start to the last outcome, restarts included. */
  eventsPerSecond: number
  /** CPU of every ingest incarnation over its whole life (start-ups and table loads included), per event. */
  cpuUsPerEvent: number
  kills: number
  lost: number
  duplicated: number
  invariantHolds: boolean
}

/** kill -9 the ingest process several times during a run; then every raw event must have exactly one outcome. */
export async function crash(ctx: BenchContext, sim: SimHandle, tables: TableTopics, count: number, kills: number, metricsPort: number): Promise<CrashResult> {
  const name = 'crash'
  const { topic, events } = await seedRawTopic(ctx, name, count)
  const topics = await ingestTopics(ctx, name, topic, tables)
  const watcher = await observe(ctx, [topics.enriched, topics.dlq], { expected: count, idleTimeoutMs: 180_000 })
  const started = Date.now()
  const cpu = new CpuMeter()
  let ingest = startIngest(ctx, sim, topics, 'batch', metricsPort)
  cpu.start(ingest.child.pid)
  let lastAt: number
  for (let k = 0; k < kills; k++) {
    const target = Math.floor(((k + 1) * count) / (kills + 2))
    while (watcher.observation.count < target) await new Promise((r) => setTimeout(r, 50))
    cpu.stop()
    await ingest.kill('SIGKILL')
    ctx.say(`  kill -9 #${k + 1} after ${watcher.observation.count} outcomes; restarting`)
    ingest = startIngest(ctx, sim, topics, 'batch', metricsPort)
    cpu.start(ingest.child.pid)
  }
  try {
    lastAt = (await watcher.done).lastAt
    cpu.stop()
    // Let anything extra (a duplicate) surface before judging.
    await new Promise((r) => setTimeout(r, 3_000))
  } finally {
    await ingest.kill()
    await watcher.stop()
  }
  const seen = watcher.observation.keys
  const lost = events.filter((e) => !seen.has(e.transactionId)).length
  const duplicated = [...seen.values()].filter((n) => n > 1).length
  return {
    events: count,
    eventsPerSecond: Math.round(count / Math.max(0.001, (lastAt - started) / 1000)),
    cpuUsPerEvent: perEvent(cpu.totalUs, count),
    kills,
    lost,
    duplicated,
    invariantHolds: lost === 0 && duplicated === 0,
  }
}

export { TOPICS }
