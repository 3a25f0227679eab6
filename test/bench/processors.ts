import path from 'node:path'
import { generateRawEvents } from '@tep/sample-traffic'
import type { RawTransaction } from '@tep/schemas'
import { SimDataset } from '@tep/sim-data'
import { CpuMeter, perEvent } from './cpu.ts'
import { consumingAt, createTopic, produceAll, repoRoot, spawnNode, spawnProcess, untilCommitted, type BenchContext, type ChildHandle } from './harness.ts'
import { kafkaStreamsBench } from './kstreams.ts'

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
 * the ingest process ready) to the moment its last output became visible to a
 * read-committed reader. Outputs arrive in bursts (whole fetches, whole
 * transactions), so timing from the first arrival would leave out the work
 * before it.
 */
export function throughput(count: number, firstAt: number, lastAt: number, cpuUs: number): ThroughputResult {
  const seconds = Math.max(0.001, (lastAt - firstAt) / 1000)
  return { events: count, seconds: Math.round(seconds * 100) / 100, eventsPerSecond: Math.round(count / seconds), cpuUsPerEvent: perEvent(cpuUs, count) }
}

type ProcessorKind = 'plain' | 'kafkajs-plain' | 'eos' | 'naive'

interface ProcessorTopics {
  input: string
  output: string
  dlq: string
  group: string
}

/**
 * Seeds `count` fresh card events, starts the processor `launch` makes and
 * measures it: from the moment it says it consumes (group joined, tasks
 * assigned) until the read-committed end offsets of its outputs stop moving
 * with every input covered (untilCommitted), the same clock for every
 * processor, Node or JVM. CPU is the processor process's own (/proc).
 */
async function measure(ctx: BenchContext, name: string, count: number, launch: (t: ProcessorTopics) => ChildHandle): Promise<ThroughputResult> {
  const { topic } = await seedRawTopic(ctx, name, count)
  const topics: ProcessorTopics = {
    input: topic,
    output: await createTopic(ctx, `bench.${ctx.runId}.${name}.out`, PARTITIONS),
    dlq: await createTopic(ctx, `bench.${ctx.runId}.${name}.dlq`, PARTITIONS),
    group: `bench-${name}-${ctx.runId}`,
  }
  const processor = launch(topics)
  const cpu = new CpuMeter()
  const stop = new AbortController()
  try {
    const started = await consumingAt(processor)
    cpu.start(processor.child.pid)
    const exited = processor.exited.then((code) => Promise.reject(new Error(`${name} exited with ${code} before it was done`)))
    const o = await Promise.race([untilCommitted(ctx, [topics.output, topics.dlq], count, { signal: stop.signal }), exited])
    cpu.stop()
    if (o.count !== count) throw new Error(`${name}: ${o.count} records on the outputs for ${count} inputs`)
    return throughput(o.count, started, o.lastAt, cpu.totalUs)
  } finally {
    stop.abort(new Error('measurement over'))
    await processor.kill()
  }
}

/** Runs processor-process.ts over `count` fresh card events. `extraEnv` reaches only the processor. */
function measureProcessor(ctx: BenchContext, kind: ProcessorKind, name: string, count: number, extraEnv: NodeJS.ProcessEnv = {}): Promise<ThroughputResult> {
  return measure(ctx, name, count, (t) =>
    spawnNode(ctx, name, path.join(repoRoot, 'test/bench/processor-process.ts'), [kind], {
      BENCH_BROKERS: ctx.brokers.join(','),
      BENCH_INPUT: t.input,
      BENCH_OUTPUT: t.output,
      BENCH_DLQ: t.dlq,
      BENCH_GROUP: t.group,
      BENCH_REGISTRY_URL: ctx.registryUrl,
      ...extraEnv,
    }),
  )
}

/**
 * Zero-work pass-through on the client the services use (@platformatic/kafka):
 * consume and produce the same bytes, idempotent producer, offsets
 * auto-committed. The baseline of the ratios.
 */
export function passThrough(ctx: BenchContext, count: number, name = 'passthrough'): Promise<ThroughputResult> {
  return measureProcessor(ctx, 'plain', name, count)
}

/** The same zero-work pass-through on KafkaJS (unpatched): a reference row, the services' former client. */
export function kafkajsPassThrough(ctx: BenchContext, count: number, name = 'kafkajs-passthrough'): Promise<ThroughputResult> {
  return measureProcessor(ctx, 'kafkajs-plain', name, count)
}

/** Zero-work exactly-once pass-through: @tep/kafka's transactional loop with an identity transform. */
export function eosPassThrough(ctx: BenchContext, count: number, name = 'eos-passthrough'): Promise<ThroughputResult> {
  return measureProcessor(ctx, 'eos', name, count)
}

/**
 * The same identity with Kafka Streams (4.x, exactly_once_v2, one stream
 * thread, its defaults otherwise): the peer a JVM team would compare with.
 */
// A JVM ends with 143 (128 + SIGTERM) after its shutdown hooks ran: the normal end here.
export async function kstreamsEosPassThrough(ctx: BenchContext, count: number, name = 'kstreams-eos-passthrough'): Promise<ThroughputResult> {
  const program = await kafkaStreamsBench(ctx.say)
  return measure(ctx, name, count, (t) =>
    spawnProcess(ctx, name, program.java, ['-Xmx512m', '-cp', program.classPath, program.mainClass, ctx.brokers.join(','), t.input, t.output, t.group, '1'], {}, { normalExitCodes: [143] }),
  )
}

/** The naive consumer: one await per message (decode, look up, produce), no batching, no concurrency. */
export function naive(ctx: BenchContext, sim: SimHandle, count: number): Promise<ThroughputResult> {
  return measureProcessor(ctx, 'naive', 'naive', count, {
    BENCH_SIM_URL: sim.url,
    BENCH_SIM_CLIENT_ID: SIM_CREDENTIALS.clientId,
    BENCH_SIM_CLIENT_SECRET: SIM_CREDENTIALS.clientSecret,
  })
}
