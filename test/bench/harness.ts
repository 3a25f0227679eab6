import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Admin as BrokerAdmin, Consumer, FetchIsolationLevels, type Admin, type Message } from '@platformatic/kafka'
import { AvroSerde, TopicReader, createRecordProducer, createSchemaRegistry, type Kafka, type TopicCodec } from '@tep/kafka'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export interface BenchContext {
  /** The connection made by createKafka: what @tep/kafka's pieces take. */
  kafka: Kafka
  admin: Admin
  brokers: string[]
  registryUrl: string
  serde: AvroSerde
  runId: string
  logDir: string
  say(line: string): void
}

export function createSerde(registryUrl: string): AvroSerde {
  return new AvroSerde({ registry: createSchemaRegistry({ url: registryUrl }) })
}

export function createBenchAdmin(brokers: string[]): Admin {
  return new BrokerAdmin({ clientId: 'bench-admin', bootstrapBrokers: brokers })
}

export async function createTopic(ctx: BenchContext, name: string, partitions: number, compact = false): Promise<string> {
  await ctx.admin.createTopics({ topics: [name], partitions, replicas: -1, configs: compact ? [{ name: 'cleanup.policy', value: 'compact' }] : [] })
  // Until every broker's metadata shows every partition with a leader: on a
  // three-broker cluster a client asking a broker that does not know the topic
  // yet is told it does not exist.
  const deadline = Date.now() + 30_000
  for (const broker of ctx.brokers) {
    const admin = new BrokerAdmin({ clientId: 'bench-topic-wait', bootstrapBrokers: [broker], retries: 0 })
    try {
      for (;;) {
        const meta = await admin.metadata({ topics: [name], forceUpdate: true }).catch(() => undefined)
        const parts = meta?.topics.get(name)?.partitions ?? []
        if (parts.length === partitions && parts.every((p) => p.leader >= 0)) break
        if (Date.now() > deadline) throw new Error(`topic ${name} has no leader for every partition on ${broker} after 30 s`)
        await new Promise((r) => setTimeout(r, 100))
      }
    } finally {
      await admin.close().catch(() => {})
    }
  }
  return name
}

/** Produces pre-encoded messages (idempotent, acks all), in chunks; `progress` after each. */
export async function produceAll(ctx: BenchContext, topic: string, messages: Array<{ key: string; value: Buffer | null }>, progress?: (n: number) => void): Promise<void> {
  const producer = createRecordProducer(ctx.kafka)
  try {
    const chunk = 20_000
    for (let i = 0; i < messages.length; i += chunk) {
      await producer.send(topic, messages.slice(i, i + chunk))
      progress?.(Math.min(i + chunk, messages.length))
    }
  } finally {
    await producer.close()
  }
}

/** A read-committed consumer with a fresh group, reading `topics` from the beginning. */
function observerConsumer(ctx: BenchContext): Consumer<Buffer, Buffer, Buffer, Buffer> {
  return new Consumer({
    clientId: 'bench-observer',
    bootstrapBrokers: ctx.brokers,
    groupId: `bench-observer-${ctx.runId}-${Math.random().toString(36).slice(2)}`,
    isolationLevel: FetchIsolationLevels.READ_COMMITTED,
    maxWaitTime: 50,
    maxBytes: 16 * 1024 * 1024,
  })
}

export interface Observation {
  count: number
  firstAt: number
  lastAt: number
  /** Values seen per key, for exactly-once checks. */
  keys: Map<string, number>
}

/**
 * A read-committed observer of output topics that sees every record (its key,
 * its arrival time): for the latency and crash runs. It counts arrivals until
 * `expected` messages arrived or `idleTimeoutMs` passed without progress.
 * The throughput rows are timed by untilCommitted instead, which costs the
 * measured processors nothing and cannot become the bottleneck.
 */
export async function observe(
  ctx: BenchContext,
  topics: string[],
  options: { expected: number; idleTimeoutMs?: number; onMessage?: (topic: string, key: string, value: Buffer | null, arrivedAt: number) => void },
): Promise<{ observation: Observation; stop: () => Promise<void>; done: Promise<Observation> }> {
  const consumer = observerConsumer(ctx)
  const observation: Observation = { count: 0, firstAt: 0, lastAt: 0, keys: new Map() }
  let resolveDone!: (o: Observation) => void
  let rejectDone!: (e: Error) => void
  const done = new Promise<Observation>((res, rej) => ((resolveDone = res), (rejectDone = rej)))
  let lastProgress = Date.now()
  const idle = options.idleTimeoutMs ?? 120_000
  const watchdog = setInterval(() => {
    if (Date.now() - lastProgress > idle) rejectDone(new Error(`no output for ${idle / 1000} s: ${observation.count} of ${options.expected} arrived on ${topics.join(', ')}`))
  }, 1_000)
  const stream = await consumer.consume({ topics, mode: 'earliest', autocommit: false, highWaterMark: 4_096 })
  stream.on('data', (m: Message<Buffer, Buffer, Buffer, Buffer>) => {
    const now = Date.now()
    const key = m.key?.toString() ?? ''
    observation.keys.set(key, (observation.keys.get(key) ?? 0) + 1)
    options.onMessage?.(m.topic, key, m.value, now)
    if (observation.count === 0) observation.firstAt = now
    observation.count += 1
    observation.lastAt = now
    lastProgress = now
    if (observation.count >= options.expected) resolveDone(observation)
  })
  stream.on('error', (err: Error) => rejectDone(err))
  const stop = async () => {
    clearInterval(watchdog)
    await stream.close().catch(() => {})
    await consumer.close(true).catch(() => {})
  }
  void done.finally(() => clearInterval(watchdog)).catch(() => {})
  return { observation, stop, done }
}

/**
 * Resolves with the moment the read-committed end offsets (last stable offsets)
 * of `topics` stopped moving after covering `expected` records: the time the
 * last output became visible, to the poll interval. Polling offsets costs the
 * processor nothing and no consumer can fall behind it, so every throughput
 * row (@platformatic/kafka, KafkaJS, Kafka Streams) is timed the same way.
 * End offsets also count transaction markers, so `count` (the records actually
 * there, read afterwards) is what the rate is computed from and what the
 * exactly-once check compares.
 */
export async function untilCommitted(ctx: BenchContext, topics: string[], expected: number, options: { idleTimeoutMs?: number; pollMs?: number; signal?: AbortSignal } = {}): Promise<{ lastAt: number; count: number }> {
  const consumer = observerConsumer(ctx)
  const idle = options.idleTimeoutMs ?? 120_000
  const pollMs = options.pollMs ?? 20
  try {
    let last = -1n
    let counted = -1n
    let lastAt = Date.now()
    for (;;) {
      if (options.signal?.aborted) throw options.signal.reason
      const offsets = await consumer.listOffsets({ topics, isolationLevel: FetchIsolationLevels.READ_COMMITTED })
      let sum = 0n
      for (const t of topics) for (const o of offsets.get(t) ?? []) sum += o
      const now = Date.now()
      if (sum !== last) {
        last = sum
        lastAt = now
      }
      // Covered and still for a moment; markers inflate the sum, so the records are counted before it counts as done.
      if (sum >= BigInt(expected) && now - lastAt >= 500 && sum !== counted) {
        counted = sum
        const count = await countRecords(ctx, topics)
        if (count >= expected) return { lastAt, count }
      }
      if (now - lastAt > idle) throw new Error(`the committed end offsets of ${topics.join(', ')} did not move for ${idle / 1000} s (at ${sum} of ${expected})`)
      await new Promise((r) => setTimeout(r, pollMs))
    }
  } finally {
    await consumer.close(true).catch(() => {})
  }
}

/** The committed records `topics` hold now (aborted ones and transaction markers not counted). */
export async function countRecords(ctx: BenchContext, topics: string[]): Promise<number> {
  let count = 0
  const reader = new TopicReader({ kafka: ctx.kafka, topics, onRecords: (batch) => void (count += batch.records.length) })
  try {
    await reader.start()
    await reader.done()
  } finally {
    await reader.stop()
  }
  return count
}

export interface ChildHandle {
  child: ChildProcess
  exited: Promise<number | null>
  kill(signal?: NodeJS.Signals): Promise<void>
}

export function spawnNode(ctx: BenchContext, name: string, script: string, args: string[], env: NodeJS.ProcessEnv): ChildHandle {
  // BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the children.
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []
  return spawnProcess(ctx, name, process.execPath, [...nodeArgs, script, ...args], env)
}

/** Any measured child (a JVM too): its output goes to the run's log folder, the last lines to the bench's own log on failure. */
export function spawnProcess(ctx: BenchContext, name: string, command: string, args: string[], env: NodeJS.ProcessEnv, options: { normalExitCodes?: number[] } = {}): ChildHandle {
  const normal = new Set([0, ...(options.normalExitCodes ?? [])])
  const child = spawn(command, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  mkdirSync(ctx.logDir, { recursive: true })
  const log = createWriteStream(path.join(ctx.logDir, `${ctx.runId}-${name}.log`), { flags: 'a' })
  let tail = ''
  const keep = (d: Buffer) => {
    log.write(d)
    tail = (tail + d.toString()).slice(-4000)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const exited = once(child, 'exit').then(([code]) => {
    if (code !== null && !normal.has(code)) ctx.say(`  ${name} exited with ${code}: ${tail.split('\n').slice(-5).join(' | ')}`)
    return code as number | null
  })
  return {
    child,
    exited,
    async kill(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill(signal)
      await exited
    },
  }
}

/**
 * Resolves with the time a processor child printed `{"consuming": <epoch ms>}`
 * (processor-process.ts); rejects if it exits first.
 */
export function consumingAt(handle: ChildHandle): Promise<number> {
  return new Promise((resolve, reject) => {
    let buffered = ''
    const onData = (d: Buffer) => {
      buffered += d.toString()
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl)
        buffered = buffered.slice(nl + 1)
        if (!line.startsWith('{"consuming"')) continue
        handle.child.stdout?.off('data', onData)
        resolve((JSON.parse(line) as { consuming: number }).consuming)
        return
      }
    }
    handle.child.stdout?.on('data', onData)
    void handle.exited.then((code) => reject(new Error(`processor exited with ${code} before it consumed`)))
  })
}

export async function waitForHttpOk(url: string, timeoutMs = 120_000, pollMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(1_000) })).ok) return
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, pollMs))
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s`)
}

/** Resident set size and its peak of a process, from /proc (Linux). */
export function processMemoryMb(pid: number): { rssMb: number; peakRssMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN)
  return { rssMb: Math.round(kb('VmRSS') / 102.4) / 10, peakRssMb: Math.round(kb('VmHWM') / 102.4) / 10 }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

export type { TopicCodec }
