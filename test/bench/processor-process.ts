/**
 * One measured processor, run by the bench as its own process so that its CPU
 * time (from /proc) is its own and not the observer's:
 *
 *   node test/bench/processor-process.ts <kind>
 *
 * kind: plain (zero-work KafkaJS pass-through, offsets auto-committed: the
 * baseline of the ratios), eos (the same bytes through @tep/kafka's
 * transactional loop, on @platformatic/kafka, with an identity transform) or
 * naive (one await per message: decode, one findBy, one produce; KafkaJS).
 *
 * Everything else comes from BENCH_* variables (see processorEnv in
 * processors.ts). Prints one JSON line `{"consuming": <epoch ms>}` once it
 * consumes (group joined / partitions assigned), then runs until SIGTERM.
 */
import { createEnrichmentClient, type CardTransactionInput } from '@tep/enrichment-client'
import { AvroSerde, createKafka, createSchemaRegistry, createTransactionalPipeline, PRODUCER_DEFAULTS, type TransactionalPipelineOptions } from '@tep/kafka'
import type { RawTransaction } from '@tep/schemas'
import type { Consumer } from 'kafkajs'

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

/** The zero-work pass-through (KafkaJS): each fetched batch produced again as it is. */
async function plain(): Promise<void> {
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

/** @tep/kafka's exactly-once loop with an identity transform; everything else at the loop's defaults. */
async function eos(): Promise<void> {
  const kafka = createKafka({ brokers: env('BENCH_BROKERS').split(','), clientId: 'bench-eos', logLevel: 'error' })
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
  const [kind] = process.argv.slice(2) as [ProcessorKind]
  if (!KINDS.includes(kind)) {
    process.stderr.write(`usage: node test/bench/processor-process.ts <${KINDS.join('|')}>\n`)
    process.exit(2)
  }
  const run = kind === 'plain' ? plain : kind === 'eos' ? eos : naive
  try {
    await run()
    process.exit(0)
  } catch (err) {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`)
    process.exit(1)
  }
}
