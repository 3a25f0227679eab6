/**
 * One measured processor, run by the bench as its own process so that its CPU
 * time (from /proc) is its own and not the observer's:
 *
 *   node test/bench/processor-process.ts <kind> <client>
 *
 * kind: plain (zero-work pass-through, offsets auto-committed), eos (the same
 * bytes through @tep/kafka's transactional loop with an identity transform) or
 * naive (one await per message: decode, one findBy, one produce; KafkaJS only).
 * client: kafkajs or platformatic.
 *
 * Everything else comes from BENCH_* variables (see processorEnv in
 * processors.ts). Prints one JSON line `{"consuming": <epoch ms>}` once it
 * consumes (group joined / partitions assigned), then runs until SIGTERM.
 */
import { Consumer as PlatformaticConsumer, Producer as PlatformaticProducer, type Message } from '@platformatic/kafka'
import { createEnrichmentClient, type CardTransactionInput } from '@tep/enrichment-client'
import { AvroSerde, createKafka, createSchemaRegistry, createTransactionalPipeline, PRODUCER_DEFAULTS, type TransactionalPipelineOptions } from '@tep/kafka'
import type { RawTransaction } from '@tep/schemas'
import type { Consumer } from 'kafkajs'
import { CLIENTS, type BenchClient } from './harness.ts'

const KINDS = ['plain', 'eos', 'naive'] as const
type ProcessorKind = (typeof KINDS)[number]

function env(name: string): string {
  const v = process.env[name]
  if (v === undefined || v === '') throw new Error(`${name} is not set`)
  return v
}

const announce = () => process.stdout.write(`${JSON.stringify({ consuming: Date.now() })}\n`)

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve())
    process.once('SIGINT', () => resolve())
  })
}

function whenJoined(consumer: Consumer): Promise<void> {
  return new Promise((resolve) => {
    const off = consumer.on(consumer.events.GROUP_JOIN, () => {
      off()
      resolve()
    })
  })
}

async function plainKafkajs(): Promise<void> {
  const kafka = createKafka({ brokers: env('BENCH_BROKERS').split(','), clientId: 'bench-plain', logLevel: 'error' })
  const out = env('BENCH_OUTPUT')
  const producer = kafka.producer({ ...PRODUCER_DEFAULTS, idempotent: true })
  await producer.connect()
  const consumer = kafka.consumer({ groupId: env('BENCH_GROUP'), maxWaitTimeInMs: 50 })
  await consumer.connect()
  await consumer.subscribe({ topics: [env('BENCH_INPUT')], fromBeginning: true })
  const joined = whenJoined(consumer)
  await consumer.run({
    partitionsConsumedConcurrently: 4,
    eachBatch: async ({ batch }) => {
      await producer.send({ topic: out, messages: batch.messages.map((m) => ({ key: m.key, value: m.value })) })
    },
  })
  await joined
  announce()
  await untilSignal()
  await Promise.all([consumer.disconnect(), producer.disconnect()])
}

/**
 * The @platformatic/kafka counterpart: a stream consumer with autocommit, an
 * idempotent producer, records forwarded in sends of up to 3,000 with at most 4
 * sends in flight (the stream is paused beyond that).
 */
async function plainPlatformatic(): Promise<void> {
  const brokers = env('BENCH_BROKERS').split(',')
  const out = env('BENCH_OUTPUT')
  const producer = new PlatformaticProducer({ clientId: 'bench-plain', bootstrapBrokers: brokers, idempotent: true, autocreateTopics: false })
  const consumer = new PlatformaticConsumer({ clientId: 'bench-plain', groupId: env('BENCH_GROUP'), bootstrapBrokers: brokers, maxWaitTime: 50 })
  const joined = new Promise<void>((resolve) => consumer.once('consumer:group:join', () => resolve()))
  const stream = await consumer.consume({ topics: [env('BENCH_INPUT')], mode: 'earliest', autocommit: true })
  let pending: { topic: string; key: Buffer | undefined; value: Buffer | undefined }[] = []
  let inFlight = 0
  let failed: Error | undefined
  const flush = () => {
    if (pending.length === 0) return
    const messages = pending
    pending = []
    inFlight++
    if (inFlight >= 4) stream.pause()
    producer
      .send({ messages })
      .catch((err: Error) => (failed ??= err))
      .finally(() => {
        inFlight--
        if (inFlight < 4 && stream.isPaused()) stream.resume()
      })
  }
  let scheduled = false
  stream.on('data', (m: Message<Buffer, Buffer, Buffer, Buffer>) => {
    pending.push({ topic: out, key: m.key ?? undefined, value: m.value ?? undefined })
    if (pending.length >= 3_000) flush()
    else if (!scheduled) {
      scheduled = true
      setImmediate(() => {
        scheduled = false
        flush()
      })
    }
  })
  await joined
  announce()
  await untilSignal()
  if (failed) process.stderr.write(`a send failed: ${failed.message}\n`)
  await stream.close()
  await consumer.close(true)
  await producer.close()
}

/**
 * @tep/kafka's exactly-once loop with an identity transform, on the client
 * named on the command line (createKafka's `client`, as services get it from
 * KAFKA_CLIENT); everything else at the loop's defaults.
 */
async function eos(client: BenchClient): Promise<void> {
  const kafka = createKafka({ brokers: env('BENCH_BROKERS').split(','), clientId: 'bench-eos', logLevel: 'error', client })
  const out = env('BENCH_OUTPUT')
  const options: TransactionalPipelineOptions = {
    kafka,
    groupId: env('BENCH_GROUP'),
    topics: [env('BENCH_INPUT')],
    transactionalIdPrefix: env('BENCH_GROUP'),
    dlqTopic: env('BENCH_DLQ'),
    transform: async (record) => ({ topic: out, key: record.key, value: record.value }),
    partitionsConsumedConcurrently: 4,
    consumer: { maxWaitTimeInMs: 50 },
  }
  const pipeline = createTransactionalPipeline(options)
  await pipeline.start()
  await pipeline.whenAssigned()
  announce()
  await untilSignal()
  await pipeline.stop()
}

function cardInput(raw: RawTransaction): CardTransactionInput {
  const input: Record<string, string> = { amount: raw.amount, currency: raw.currency, dateTime: new Date(raw.occurredAt).toISOString() }
  for (const [k, v] of Object.entries(raw.card ?? {})) if (v !== null && k !== 'street' && k !== 'processingCode' && k !== 'posEntryMode' && !k.startsWith('transaction') && k !== 'localDateTime') input[k] = v
  return input as CardTransactionInput
}

/** The naive consumer: one await per message (decode, look up, produce), no batching, no concurrency. */
async function naive(): Promise<void> {
  const kafka = createKafka({ brokers: env('BENCH_BROKERS').split(','), clientId: 'bench-naive', logLevel: 'error' })
  const input = env('BENCH_INPUT')
  const out = env('BENCH_OUTPUT')
  const codec = new AvroSerde({ registry: createSchemaRegistry({ url: env('BENCH_REGISTRY_URL') }) }).topic(input, 'RawTransaction')
  const client = createEnrichmentClient({ baseUrl: env('BENCH_SIM_URL'), credentials: { type: 'oauth', clientId: env('BENCH_SIM_CLIENT_ID'), clientSecret: env('BENCH_SIM_CLIENT_SECRET') } })
  const producer = kafka.producer({ ...PRODUCER_DEFAULTS, idempotent: true })
  await producer.connect()
  const consumer = kafka.consumer({ groupId: env('BENCH_GROUP'), maxWaitTimeInMs: 50 })
  await consumer.connect()
  await consumer.subscribe({ topics: [input], fromBeginning: true })
  const joined = whenJoined(consumer)
  await consumer.run({
    eachMessage: async ({ message }) => {
      const raw = await codec.decode(message.value)
      const found = await client.findByCardTransaction(cardInput(raw)).catch(() => null)
      await producer.send({ topic: out, messages: [{ key: message.key, value: Buffer.from(JSON.stringify({ id: raw.transactionId, handle: found?.handle ?? null })) }] })
    },
  })
  await joined
  announce()
  await untilSignal()
  await Promise.all([consumer.disconnect(), producer.disconnect()])
  await client.close()
}

{
  const [kind, client] = process.argv.slice(2) as [ProcessorKind, BenchClient]
  if (!KINDS.includes(kind) || !CLIENTS.includes(client)) {
    process.stderr.write(`usage: node test/bench/processor-process.ts <${KINDS.join('|')}> <${CLIENTS.join('|')}>\n`)
    process.exit(2)
  }
  const run = kind === 'plain' ? (client === 'kafkajs' ? plainKafkajs : plainPlatformatic) : kind === 'eos' ? () => eos(client) : naive
  try {
    await run()
    process.exit(0)
  } catch (err) {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`)
    process.exit(1)
  }
}
