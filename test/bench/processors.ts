import path from 'node:path'
import { generateRawEvents } from '@tep/sample-traffic'
import type { RawTransaction } from '@tep/schemas'
import { SimDataset } from '@tep/sim-data'
import { CpuMeter, perEvent } from './cpu.ts'
import { consumingAt, createTopic, observe, produceAll, repoRoot, spawnNode, type BenchContext } from './harness.ts'

export const PARTITIONS = 6
export const SIM_CREDENTIALS = { clientId: 'bench-client', clientSecret: 'bench-secret' }

export interface SimHandle {
  url: string
  stop(): Promise<void>
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
  /** CPU (user + system) of the measured process over the measured span, per event. */
  cpuUsPerEvent: number
}

/**
 * Throughput from the moment the processor starts consuming (group joined, or
 * the ingest process ready) to the last output seen by a read-committed reader.
 * Outputs arrive in bursts (whole fetches, whole transactions), so timing from
 * the first arrival would leave out the work before it.
 */
export function throughput(count: number, firstAt: number, lastAt: number, cpuUs: number): ThroughputResult {
  const seconds = Math.max(0.001, (lastAt - firstAt) / 1000)
  return { events: count, seconds: Math.round(seconds * 100) / 100, eventsPerSecond: Math.round(count / seconds), cpuUsPerEvent: perEvent(cpuUs, count) }
}

type ProcessorKind = 'plain' | 'eos' | 'naive'

/**
 * Runs processor-process.ts over `count` fresh card events and measures it.
 * `extraEnv` reaches only the processor (e.g. the simulator's address).
 */
async function measureProcessor(ctx: BenchContext, kind: ProcessorKind, name: string, count: number, extraEnv: NodeJS.ProcessEnv = {}): Promise<ThroughputResult> {
  const { topic } = await seedRawTopic(ctx, name, count)
  const out = await createTopic(ctx, `bench.${ctx.runId}.${name}.out`, PARTITIONS)
  const dlq = await createTopic(ctx, `bench.${ctx.runId}.${name}.dlq`, PARTITIONS)
  const watcher = await observe(ctx, [out, dlq], { expected: count })
  const processor = spawnNode(ctx, name, path.join(repoRoot, 'test/bench/processor-process.ts'), [kind], {
    BENCH_BROKERS: ctx.brokers.join(','),
    BENCH_INPUT: topic,
    BENCH_OUTPUT: out,
    BENCH_DLQ: dlq,
    BENCH_GROUP: `bench-${name}-${ctx.runId}`,
    BENCH_REGISTRY_URL: ctx.registryUrl,
    ...extraEnv,
  })
  const cpu = new CpuMeter()
  try {
    // watcher.done rejects when no output comes for a while: do not wait forever for the announcement.
    const started = await Promise.race([consumingAt(processor), watcher.done.then(() => Promise.reject(new Error(`${name}: all outputs arrived before the processor said it consumed`)))])
    cpu.start(processor.child.pid)
    const o = await Promise.race([watcher.done, processor.exited.then((code) => Promise.reject(new Error(`${name} exited with ${code} before it was done`)))])
    cpu.stop()
    return throughput(o.count, started, o.lastAt, cpu.totalUs)
  } finally {
    await processor.kill()
    await watcher.stop()
  }
}

/**
 * Zero-work pass-through (KafkaJS): consume and produce the same bytes, offsets
 * auto-committed. The baseline of the ratios (ARCHITECTURE.md §8).
 */
export function passThrough(ctx: BenchContext, count: number): Promise<ThroughputResult> {
  return measureProcessor(ctx, 'plain', 'passthrough', count)
}

/** Zero-work exactly-once pass-through: @tep/kafka's transactional loop with an identity transform. */
export function eosPassThrough(ctx: BenchContext, count: number): Promise<ThroughputResult> {
  return measureProcessor(ctx, 'eos', 'eos-passthrough', count)
}

/** The naive consumer (KafkaJS): one await per message (decode, look up, produce), no batching, no concurrency. */
export function naive(ctx: BenchContext, sim: SimHandle, count: number): Promise<ThroughputResult> {
  return measureProcessor(ctx, 'naive', 'naive', count, {
    BENCH_SIM_URL: sim.url,
    BENCH_SIM_CLIENT_ID: SIM_CREDENTIALS.clientId,
    BENCH_SIM_CLIENT_SECRET: SIM_CREDENTIALS.clientSecret,
  })
}
