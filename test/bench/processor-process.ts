/**
 * One measured processor, run by the bench as its own process so that its CPU
 * time (from /proc) is its own and not the observer's:
 *
 *   node test/bench/processor-process.ts <kind>
 *
 * kind: plain (zero-work pass-through on @platformatic/kafka, the services'
 * client: idempotent producer, offsets auto-committed; the baseline of the
 * ratios), kafkajs-plain (the same on KafkaJS, unpatched: a reference row),
 * eos (the same bytes through @tep/kafka's transactional loop with an identity
 * transform) or naive (one await per message: decode, one findBy, one produce).
 *
 * Everything else comes from BENCH_* variables (see measureProcessor in
 * processors.ts). Prints one JSON line `{"consuming": <epoch ms>}` once it
 * consumes (group joined / partitions assigned), then runs until SIGTERM.
 */
import { writeSync } from 'node:fs'
import { Consumer, Producer, type Message, type MessagesStream } from '@platformatic/kafka'
import { createEnrichmentClient, type CardTransactionInput } from '@tep/enrichment-client'
import { AvroSerde, createKafka, createSchemaRegistry, createTransactionalPipeline, type TransactionalPipelineOptions } from '@tep/kafka'
import type { RawTransaction } from '@tep/schemas'
import { Kafka as KafkaJS, logLevel, Partitioners, type Consumer as KafkaJSConsumer } from 'kafkajs'

const KINDS = ['plain', 'kafkajs-plain', 'eos', 'naive'] as const
type ProcessorKind = (typeof KINDS)[number]
type Bytes = Buffer

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

const brokers = () => env('BENCH_BROKERS').split(',')

function plainConsumer(clientId: string): Consumer<Bytes, Bytes, Bytes, Bytes> {
  return new Consumer({ clientId, bootstrapBrokers: brokers(), groupId: env('BENCH_GROUP'), maxWaitTime: 50 })
}

function plainProducer(clientId: string): Producer<Bytes, Bytes, Bytes, Bytes> {
  return new Producer({ clientId, bootstrapBrokers: brokers(), idempotent: true, acks: -1 })
}

function subscribe(consumer: Consumer<Bytes, Bytes, Bytes, Bytes>): Promise<MessagesStream<Bytes, Bytes, Bytes, Bytes>> {
  // Resolves once the group is joined and partitions are assigned.
  return consumer.consume({ topics: [env('BENCH_INPUT')], mode: 'committed', fallbackMode: 'earliest', autocommit: true })
}

/**
 * The zero-work pass-through on @platformatic/kafka: what a stream delivered
 * since the last turn of the event loop is sent as one request (at most
 * MAX_PER_SEND records), up to four in flight (the stream pauses beyond), each
 * record to its input partition.
 */
const MAX_PER_SEND = 2_000
async function plain(): Promise<void> {
  const out = env('BENCH_OUTPUT')
  const producer = plainProducer('bench-plain')
  const consumer = plainConsumer('bench-plain')
  const stream = await subscribe(consumer)
  let pending: Message<Bytes, Bytes, Bytes, Bytes>[] = []
  let scheduled = false
  let inFlight = 0
  let failed: unknown
  const flush = (): void => {
    scheduled = false
    const batch = pending
    pending = []
    if (batch.length === 0) return
    inFlight += 1
    if (inFlight >= 4) stream.pause()
    producer
      .send({ messages: batch.map((m) => ({ topic: out, partition: m.partition, key: m.key, value: m.value })) })
      .then(
        () => {
          inFlight -= 1
          if (stream.isPaused() && inFlight < 4) stream.resume()
        },
        (err: unknown) => {
          failed = err
          process.kill(process.pid, 'SIGTERM')
        },
      )
  }
  stream.on('data', (m: Message<Bytes, Bytes, Bytes, Bytes>) => {
    pending.push(m)
    // A request's batch per partition must stay under the broker's message.max.bytes (1 MiB).
    if (pending.length >= MAX_PER_SEND) return flush()
    if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  })
  announce()
  await untilSignal()
  await stream.close()
  await Promise.all([consumer.close(), producer.close()])
  if (failed !== undefined) throw failed
}

function whenJoined(consumer: KafkaJSConsumer): Promise<void> {
  return new Promise((resolve) => {
    const off = consumer.on(consumer.events.GROUP_JOIN, () => {
      off()
      resolve()
    })
  })
}

/** The zero-work pass-through on KafkaJS: each fetched batch produced again as it is. */
async function kafkajsPlain(): Promise<void> {
  const kafka = new KafkaJS({ brokers: brokers(), clientId: 'bench-kafkajs-plain', logLevel: logLevel.ERROR })
  const out = env('BENCH_OUTPUT')
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false, idempotent: true })
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
    // Synchronous, as an identity is (Kafka Streams' is too): an async one would add a
    // promise per record of the bench's own making, not the loop's (the loop takes both).
    transform: (record) => ({ topic: out, key: record.key, value: record.value }),
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
  const input = env('BENCH_INPUT')
  const out = env('BENCH_OUTPUT')
  const codec = new AvroSerde({ registry: createSchemaRegistry({ url: env('BENCH_REGISTRY_URL') }) }).topic(input, 'RawTransaction')
  const client = createEnrichmentClient({ baseUrl: env('BENCH_SIM_URL'), credentials: { type: 'oauth', clientId: env('BENCH_SIM_CLIENT_ID'), clientSecret: env('BENCH_SIM_CLIENT_SECRET') } })
  const producer = plainProducer('bench-naive')
  const consumer = plainConsumer('bench-naive')
  const stream = await subscribe(consumer)
  announce()
  const work = (async () => {
    for await (const message of stream as AsyncIterable<Message<Bytes, Bytes, Bytes, Bytes>>) {
      const raw = await codec.decode(message.value)
      const found = await client.findByCardTransaction(cardInput(raw)).catch(() => null)
      await producer.send({ messages: [{ topic: out, key: message.key, value: Buffer.from(JSON.stringify({ id: raw.transactionId, handle: found?.handle ?? null })) }] })
    }
  })()
  await Promise.race([untilSignal(), work])
  await stream.close()
  await work.catch(() => undefined)
  await Promise.all([consumer.close(), producer.close()])
  await client.close()
}

{
  const [kind] = process.argv.slice(2) as [ProcessorKind]
  if (!KINDS.includes(kind)) {
    process.stderr.write(`usage: node test/bench/processor-process.ts <${KINDS.join('|')}>\n`)
    process.exit(2)
  }
  const run = { plain, 'kafkajs-plain': kafkajsPlain, eos, naive }[kind]
  try {
    await run()
    process.exit(0)
  } catch (err) {
    // Synchronous: an asynchronous write to a pipe is lost by process.exit.
    const inner = (err as { errors?: unknown[] }).errors ?? []
    writeSync(2, `${(err as Error).stack ?? String(err)}\n${inner.map((e) => `caused by: ${(e as Error).message} ${JSON.stringify((e as { response?: unknown }).response ?? '', (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`.slice(0, 600)).join('\n')}\n`)
    process.exit(1)
  }
}
