import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Admin, Consumer, Kafka, Producer } from 'kafkajs'
import { Admin as BrokerAdmin } from '@platformatic/kafka'
import { AvroSerde, PRODUCER_DEFAULTS, createSchemaRegistry, type TopicCodec } from '@tep/kafka'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export interface BenchContext {
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

export async function createTopic(ctx: BenchContext, name: string, partitions: number, compact = false): Promise<string> {
  // Not KafkaJS's waitForLeaders: on a three-broker cluster its metadata wait throws
  // "does not host this topic-partition" instead of waiting; the loop below waits.
  await ctx.admin.createTopics({
    waitForLeaders: false,
    topics: [{ topic: name, numPartitions: partitions, replicationFactor: -1, configEntries: compact ? [{ name: 'cleanup.policy', value: 'compact' }] : [] }],
  })
  // Until every broker's metadata shows every partition with a leader: a KafkaJS
  // client refreshing its metadata from a broker that does not know the topic yet
  // fails with "does not host this topic-partition" instead of retrying.
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

/**
 * One send, again while the cluster answers with a retriable error for up to 30 s:
 * on a three-broker cluster a new topic's leader can answer "does not host this
 * topic-partition" for a moment after every broker's metadata shows it, and
 * KafkaJS's own retries give up first.
 */
async function sendRetrying(producer: Producer, topic: string, messages: Array<{ key: string; value: Buffer | null }>): Promise<void> {
  const deadline = Date.now() + 30_000
  for (let attempt = 1; ; attempt++) {
    try {
      await producer.send({ topic, messages })
      return
    } catch (err) {
      if ((err as { retriable?: boolean }).retriable !== true || Date.now() > deadline) throw err
      await new Promise((r) => setTimeout(r, Math.min(1_000, 50 * attempt)))
    }
  }
}

/** Produces pre-encoded messages as fast as KafkaJS allows, in chunks. */
export async function produceAll(ctx: BenchContext, topic: string, messages: Array<{ key: string; value: Buffer | null }>, progress?: (n: number) => void): Promise<void> {
  const producer: Producer = ctx.kafka.producer({ ...PRODUCER_DEFAULTS, idempotent: true })
  await producer.connect()
  try {
    const chunk = 2_000
    const inFlight: Promise<unknown>[] = []
    for (let i = 0; i < messages.length; i += chunk) {
      inFlight.push(sendRetrying(producer, topic, messages.slice(i, i + chunk)))
      if (inFlight.length >= 4) await inFlight.shift()
      progress?.(Math.min(i + chunk, messages.length))
    }
    await Promise.all(inFlight)
  } finally {
    await producer.disconnect()
  }
}

export interface Observation {
  count: number
  firstAt: number
  lastAt: number
  /** Values seen per key, for exactly-once checks. */
  keys: Map<string, number>
}

/**
 * A read-committed observer of output topics: counts arrivals (and keys) until
 * `expected` messages arrived or `timeoutMs` passed without progress.
 */
export async function observe(
  ctx: BenchContext,
  topics: string[],
  options: { expected: number; idleTimeoutMs?: number; onMessage?: (topic: string, key: string, value: Buffer | null, arrivedAt: number) => void; started?: () => void },
): Promise<{ observation: Observation; stop: () => Promise<void>; done: Promise<Observation> }> {
  const consumer: Consumer = ctx.kafka.consumer({ groupId: `bench-observer-${ctx.runId}-${Math.random().toString(36).slice(2)}`, readUncommitted: false, maxWaitTimeInMs: 50, maxBytesPerPartition: 4 * 1024 * 1024 })
  await consumer.connect()
  await consumer.subscribe({ topics, fromBeginning: true })
  const observation: Observation = { count: 0, firstAt: 0, lastAt: 0, keys: new Map() }
  let resolveDone!: (o: Observation) => void
  let rejectDone!: (e: Error) => void
  const done = new Promise<Observation>((res, rej) => ((resolveDone = res), (rejectDone = rej)))
  let lastProgress = Date.now()
  const idle = options.idleTimeoutMs ?? 120_000
  const watchdog = setInterval(() => {
    if (Date.now() - lastProgress > idle) rejectDone(new Error(`no output for ${idle / 1000} s: ${observation.count} of ${options.expected} arrived on ${topics.join(', ')}`))
  }, 1_000)
  const joined = new Promise<void>((resolve) => {
    const off = consumer.on(consumer.events.GROUP_JOIN, () => {
      off()
      resolve()
    })
  })
  await consumer.run({
    eachBatch: async ({ batch }) => {
      const now = Date.now()
      for (const m of batch.messages) {
        const key = m.key?.toString() ?? ''
        observation.keys.set(key, (observation.keys.get(key) ?? 0) + 1)
        options.onMessage?.(batch.topic, key, m.value, now)
      }
      if (observation.count === 0) observation.firstAt = now
      observation.count += batch.messages.length
      observation.lastAt = now
      lastProgress = now
      if (observation.count >= options.expected) resolveDone(observation)
    },
  })
  await joined
  options.started?.()
  const stop = async () => {
    clearInterval(watchdog)
    await consumer.disconnect()
  }
  void done.finally(() => clearInterval(watchdog)).catch(() => {})
  return { observation, stop, done }
}

export interface ChildHandle {
  child: ChildProcess
  exited: Promise<number | null>
  kill(signal?: NodeJS.Signals): Promise<void>
}

export function spawnNode(ctx: BenchContext, name: string, script: string, args: string[], env: NodeJS.ProcessEnv): ChildHandle {
  // BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the children.
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
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
    if (code !== 0 && code !== null) ctx.say(`  ${name} exited with ${code}: ${tail.split('\n').slice(-5).join(' | ')}`)
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
