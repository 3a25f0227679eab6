/**
 * Shared set-up of the transactional pipeline tests: unique topics, a pipeline
 * with test timings, and promises for pipeline events (no sleeping).
 */
import type { Kafka } from '@tep/kafka'
import {
  createKafka,
  ensureTopics,
  type TopicSpec,
  createTransactionalPipeline,
  type CommittedEvent,
  type KafkaLogger,
  type PipelineHooks,
  type TransactionalPipeline,
  type TransactionalPipelineOptions,
} from '@tep/kafka'
import { inject } from 'vitest'
import { uniqueName, type KafkaTestKit } from '../support/kafka-test-kit.ts'

export const PIPELINE_TEST_CONSUMER = {
  sessionTimeout: 10_000,
  heartbeatInterval: 1_000,
  maxWaitTimeInMs: 200,
} as const

/** Keeps warnings and errors in memory; printed by a failing assertion when useful. */
export function memoryLogger(): KafkaLogger & { lines: string[] } {
  const lines: string[] = []
  const push = (level: string) => (obj: object, msg?: string) => {
    lines.push(
      `${level} ${msg ?? ''} ${JSON.stringify(obj, (_k, v: unknown) => (v instanceof Error ? v.message : v))}`,
    )
  }
  return { lines, debug: () => {}, info: () => {}, warn: push('warn'), error: push('error') }
}

/** PIPELINE_DEBUG=1: every pipeline log line on stderr (debugging a failing test). */
function consoleLogger(name: string): KafkaLogger {
  const line = (level: string) => (obj: object, msg?: string) =>
    console.error(`${new Date().toISOString()} ${level} [${name}] ${msg ?? ''} ${JSON.stringify(obj, (_k, v: unknown) => (v instanceof Error ? v.message : typeof v === 'bigint' ? v.toString() : v))}`)
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') }
}

export interface PipelineTopics {
  input: string
  output: string
  dlq: string
  groupId: string
  prefix: string
}

export async function pipelineTopics(
  kit: KafkaTestKit,
  name: string,
  partitions: number,
): Promise<PipelineTopics> {
  const base = uniqueName(name)
  const t = {
    input: `${base}.in`,
    output: `${base}.out`,
    dlq: `${base}.dlq`,
    groupId: `${base}.group`,
    prefix: `${base}.tx`,
  }
  // ensureTopics rather than the kit: it waits out a broker that is slow to publish new topics' metadata.
  const spec = (name: string, n: number): TopicSpec => ({
    name,
    partitions: n,
    cleanupPolicy: 'delete',
    valueSchema: null,
    key: 'test',
    configs: {},
    description: 'test',
  })
  await ensureTopics(kit.kafka, [spec(t.input, partitions), spec(t.output, partitions), spec(t.dlq, 1)])
  return t
}

export function pipelineKafka(clientId = uniqueName('pipeline')): Kafka {
  return createKafka({ brokers: inject('kafkaBrokers'), clientId, logLevel: 'error' })
}

/** Counts committed input records and resolves waiters when a total is reached. */
export class CommitCounter {
  committed = 0
  events: CommittedEvent[] = []
  private waiters: { total: number; resolve: () => void }[] = []

  readonly hook = (event: CommittedEvent): void => {
    this.committed += event.records
    this.events.push(event)
    this.waiters = this.waiters.filter((w) => {
      if (this.committed < w.total) return true
      w.resolve()
      return false
    })
  }

  /** Resolves once at least `total` input records have been committed (rejects after `timeoutMs`). */
  reach(total: number, timeoutMs = 60_000): Promise<void> {
    if (this.committed >= total) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`only ${this.committed} of ${total} input records committed within ${timeoutMs} ms`),
          ),
        timeoutMs,
      )
      this.waiters.push({
        total,
        resolve: () => {
          clearTimeout(timer)
          resolve()
        },
      })
    })
  }
}

export function startPipeline(
  kafka: Kafka,
  topics: PipelineTopics,
  overrides: Partial<TransactionalPipelineOptions> & Pick<TransactionalPipelineOptions, 'transform'>,
  hooks: PipelineHooks = {},
): { pipeline: TransactionalPipeline; started: Promise<void> } {
  const pipeline = createTransactionalPipeline({
    kafka,
    groupId: topics.groupId,
    topics: [topics.input],
    transactionalIdPrefix: topics.prefix,
    dlqTopic: topics.dlq,
    transactionTimeoutMs: 10_000,
    consumer: PIPELINE_TEST_CONSUMER,
    hooks,
    ...(process.env.PIPELINE_DEBUG === '1' ? { logger: consoleLogger(topics.groupId) } : {}),
    ...overrides,
  })
  return { pipeline, started: pipeline.start() }
}

/**
 * Produces `count` records keyed `k<i>` with values `v<i>` (non-transactional,
 * idempotent like every kit producer: a retried request must not duplicate the input).
 */
export async function produceInputs(
  kit: KafkaTestKit,
  topic: string,
  count: number,
  from = 0,
): Promise<string[]> {
  const producer = kit.producer()
  await producer.connect()
  const values = Array.from({ length: count }, (_, i) => `v${from + i}`)
  try {
    await producer.send({ topic, messages: values.map((v, i) => ({ key: `k${from + i}`, value: v })) })
  } finally {
    await producer.disconnect()
  }
  return values
}

/**
 * A logger that runs `action` once, when the pipeline logs a line containing
 * `text` (an event of the pipeline under test, awaited instead of slept for).
 */
export function loggerActingOn(text: string, action: () => Promise<void>): KafkaLogger & { acted: Promise<void> } {
  let resolve!: () => void
  let reject!: (err: unknown) => void
  const acted = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  let fired = false
  const check = (_obj: object, msg?: string) => {
    if (fired || msg === undefined || !msg.includes(text)) return
    fired = true
    action().then(resolve, reject)
  }
  return { acted, debug: check, info: check, warn: check, error: check }
}
