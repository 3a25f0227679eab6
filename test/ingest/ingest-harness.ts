/**
 * Shared set-up of the transaction-ingest integration tests: unique topics, the
 * enrichment simulator in-process, raw events built from the simulator's own
 * samples (so expected outcomes come from the simulator, never from the test),
 * and read-committed readers of the results.
 */
import { createEnrichmentClient, type EnrichmentClient } from '@tep/enrichment-client'
import { startEnrichmentSim, type EnrichmentSim } from '@tep/enrichment-sim'
import { AvroSerde, createKafka, createSchemaRegistry, ensureTopics, readDlqHeaders, type Kafka, type TopicSpec } from '@tep/kafka'
import type { EnrichedTransaction, RawTransaction } from '@tep/schemas'
import {
  startTransactionIngest,
  type IngestTopics,
  type TransactionIngest,
  type TransactionIngestOptions,
} from '@tep/transaction-ingest'
import { afterAll, beforeAll, inject } from 'vitest'
import { readTopic } from '../kafka/read-topic.ts'
import { createKafkaTestKit, uniqueName, type KafkaTestKit, type TestAdmin as Admin } from '../support/kafka-test-kit.ts'

export const SIM_CLIENT = { clientId: 'sim-client', clientSecret: 'sim-secret' }

type SchemaRegistry = ReturnType<typeof createSchemaRegistry>

export function registryForTests(): SchemaRegistry {
  return createSchemaRegistry({ url: inject('registryUrl') })
}

export function serdeForTests(registry: SchemaRegistry = registryForTests()): AvroSerde {
  return new AvroSerde({ registry })
}

export async function startSim(seed: number): Promise<EnrichmentSim> {
  return startEnrichmentSim({ seed, shops: 3_000, merchants: 300 })
}

/** A client with short timeouts and few retries so that failures reach the pipeline quickly. */
export function simClient(
  sim: EnrichmentSim,
  overrides: { retries?: number; timeoutMs?: number } = {},
): EnrichmentClient {
  return createEnrichmentClient({
    baseUrl: sim.url,
    tokenUrl: sim.tokenUrl,
    credentials: { type: 'oauth', ...SIM_CLIENT },
    retry: { retries: overrides.retries ?? 1, initialDelayMs: 20, maxDelayMs: 200 },
    timeouts: {
      connectMs: 1_000,
      headersMs: overrides.timeoutMs ?? 2_000,
      bodyMs: overrides.timeoutMs ?? 2_000,
    },
    limits: { maxConcurrent: 64 },
  })
}

/**
 * The options every ingest test starts from: its own Kafka client (named after
 * the group, or `${groupId}-${clientName}`), the test's group and transactional
 * ids, and a consumer that notices a lost member within seconds. Tests spread
 * what they prove on top.
 */
export function ingestTestOptions(
  topics: TestTopics,
  registry: SchemaRegistry,
  client: EnrichmentClient,
  clientName = 'client',
): TransactionIngestOptions {
  return {
    kafka: createKafka({ brokers: inject('kafkaBrokers'), clientId: `${topics.groupId}-${clientName}`, logLevel: 'error' }),
    schemaRegistry: registry,
    client,
    topics,
    groupId: topics.groupId,
    transactionalIdPrefix: topics.transactionalIdPrefix,
    consumer: { sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 200 },
  }
}

/** A test file's Kafka kit, registry, serde, simulator and client, and the ingests it started. */
export interface IngestWorld {
  readonly kit: KafkaTestKit
  readonly registry: SchemaRegistry
  readonly serde: AvroSerde
  /** Started in beforeAll: read it inside tests and hooks only. */
  readonly sim: EnrichmentSim
  readonly client: EnrichmentClient
  /** ingestTestOptions plus `options`; every ingest started here is stopped after the file's tests. */
  startIngest(topics: TestTopics, options?: Partial<TransactionIngestOptions>): Promise<TransactionIngest>
}

/**
 * Registers the beforeAll/afterAll of a test file that runs ingests against the
 * simulator seeded with `seed`: afterwards the ingests stop before the client
 * and the simulator close, so no ingest is left calling a closed simulator.
 */
export function useIngestWorld(seed: number): IngestWorld {
  const kit = createKafkaTestKit()
  const registry = registryForTests()
  const serde = serdeForTests(registry)
  let sim: EnrichmentSim | undefined
  let client: EnrichmentClient | undefined
  const started: TransactionIngest[] = []
  beforeAll(async () => {
    sim = await startSim(seed)
    client = simClient(sim)
  })
  afterAll(async () => {
    await Promise.allSettled(started.map((ingest) => ingest.stop()))
    await client?.close()
    await sim?.close()
    await kit.disconnectAll()
  })
  const whenStarted = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} starts in beforeAll: use it inside a test or hook`)
    return value
  }
  return {
    kit,
    registry,
    serde,
    get sim() {
      return whenStarted(sim, 'the enrichment simulator')
    },
    get client() {
      return whenStarted(client, 'the enrichment client')
    },
    async startIngest(topics, options = {}) {
      const ingest = await startTransactionIngest({
        ...ingestTestOptions(topics, registry, whenStarted(client, 'the enrichment client')),
        ...options,
      })
      started.push(ingest)
      return ingest
    },
  }
}

export interface TestTopics extends IngestTopics {
  groupId: string
  transactionalIdPrefix: string
}

export async function createIngestTopics(
  kit: KafkaTestKit,
  name: string,
  partitions = 3,
): Promise<TestTopics> {
  const base = uniqueName(name)
  const t: TestTopics = {
    input: `${base}.raw`,
    enriched: `${base}.enriched`,
    dlq: `${base}.dlq`,
    fetched: `${base}.fetched`,
    shops: `${base}.shops`,
    merchants: `${base}.merchants`,
    groupId: `${base}.ingest`,
    transactionalIdPrefix: `${base}.tx`,
  }
  const spec = (topic: string, cleanupPolicy: 'delete' | 'compact'): TopicSpec => ({
    name: topic,
    partitions,
    cleanupPolicy,
    valueSchema: null,
    key: 'test',
    configs: {},
    description: 'test',
  })
  await ensureTopics(kit.kafka, [
    spec(t.input, 'delete'),
    spec(t.enriched, 'delete'),
    spec(t.dlq, 'delete'),
    spec(t.fetched, 'delete'),
    spec(t.shops, 'compact'),
    spec(t.merchants, 'compact'),
  ])
  return t
}

/** One sample of GET /__admin/samples. */
export interface SimSample {
  kind: 'card' | 'transfer'
  operation: string
  input: Record<string, string>
  expected: {
    outcome: 'found' | 'notFound' | 'invalid'
    handle?: string
    shopUid?: string
    merchantUid?: string
    code?: string
    parameter?: string
  }
}

export async function fetchSamples(
  sim: EnrichmentSim,
  kind: 'card' | 'transfer',
  outcome: 'found' | 'notFound' | 'invalid',
  count: number,
  seed: number,
): Promise<SimSample[]> {
  const res = await fetch(
    `${sim.url}/__admin/samples?count=${count}&kind=${kind}&outcome=${outcome}&seed=${seed}`,
  )
  if (!res.ok) throw new Error(`samples answered ${res.status}: ${await res.text()}`)
  return ((await res.json()) as { samples: SimSample[] }).samples
}

/**
 * Input fields a raw event forwards unchanged to the API. amount, currency and
 * dateTime are taken from the raw event's own (validated) fields, so a sample the
 * API rejects for one of those cannot be expressed as a valid raw event.
 */
const CARD_PASSTHROUGH = [
  'merchantId',
  'terminalId',
  'description',
  'city',
  'country',
  'postalCode',
  'mcc',
  'acquirerId',
]
const TRANSFER_PASSTHROUGH = [
  'accountPrefix',
  'accountNumber',
  'bankCode',
  'iban',
  'bic',
  'sortCode',
  'name',
  'variableSymbol',
  'constantSymbol',
  'specificSymbol',
  'message',
  'remittanceInformation',
  'reference',
  'endToEndId',
]

/** True when the sample's verdict survives the trip through a RawTransaction. */
export function representable(sample: SimSample): boolean {
  if (sample.expected.outcome !== 'invalid') return true
  const parameter = sample.expected.parameter
  if (parameter === undefined) return true
  return (sample.kind === 'card' ? CARD_PASSTHROUGH : TRANSFER_PASSTHROUGH).includes(parameter)
}

const nullable = (value: string | undefined): string | null => (value === undefined ? null : value)

/** The raw event a card processor or bank-sync would publish for this lookup input. */
export function rawFromSample(sample: SimSample, transactionId: string): RawTransaction {
  const input = sample.input
  const amount =
    input.amount !== undefined && /^[0-9]+(\.[0-9]+)?$/.test(input.amount) ? input.amount : '100.00'
  const currency = input.currency !== undefined && /^[A-Z]{3}$/.test(input.currency) ? input.currency : 'CZK'
  const base = {
    transactionId,
    source: sample.kind === 'card' ? 'CARD_PROCESSOR' : 'BANK_SYNC',
    sourceReference: null,
    customerId: null,
    accountId: null,
    occurredAt: Date.UTC(2026, 10, 1, 12, 0, 0),
    receivedAt: Date.UTC(2026, 10, 1, 12, 0, 1),
    amount,
    currency,
    creditDebit: 'DEBIT' as const,
    refresh: false,
  }
  if (sample.kind === 'card') {
    return {
      ...base,
      card: {
        merchantId: nullable(input.merchantId),
        terminalId: nullable(input.terminalId),
        description: nullable(input.description),
        street: null,
        city: nullable(input.city),
        postalCode: nullable(input.postalCode),
        country: nullable(input.country),
        mcc: nullable(input.mcc),
        acquirerId: nullable(input.acquirerId),
        transactionAmount: null,
        transactionCurrency: null,
        localDateTime: null,
        processingCode: null,
        posEntryMode: null,
        cardBin: input.cardBin !== undefined && /^[0-9]{6}$/.test(input.cardBin) ? input.cardBin : null,
      },
      transfer: null,
    }
  }
  const scheme = sample.operation.split('/')[1]?.toUpperCase() ?? 'OTHER'
  return {
    ...base,
    card: null,
    transfer: {
      scheme,
      counterpartyName: nullable(input.name),
      counterpartyAccountPrefix: nullable(input.accountPrefix),
      counterpartyAccountNumber: nullable(input.accountNumber),
      counterpartyBankCode: nullable(input.bankCode),
      counterpartySortCode: nullable(input.sortCode),
      counterpartyIban: nullable(input.iban),
      counterpartyBic: nullable(input.bic),
      counterpartyCity: null,
      counterpartyPostalCode: null,
      counterpartyCountry: null,
      variableSymbol: nullable(input.variableSymbol),
      constantSymbol: nullable(input.constantSymbol),
      specificSymbol: nullable(input.specificSymbol),
      message: nullable(input.message ?? input.remittanceInformation ?? input.reference),
      endToEndId: nullable(input.endToEndId),
      paymentType: null,
    },
  }
}

/** Produces raw events (Avro, keyed by transactionId) and raw byte records as given. */
export async function produceRaw(
  kit: KafkaTestKit,
  serde: AvroSerde,
  topic: string,
  events: RawTransaction[],
  rawBytes: { key: string; value: Buffer }[] = [],
): Promise<void> {
  const codec = serde.topic(topic, 'RawTransaction')
  const messages = await Promise.all(
    events.map(async (e) => ({ key: e.transactionId, value: await codec.encode(e) })),
  )
  // Idempotent (every kit producer is): a retried produce request whose response
  // was lost must not write the raw events twice (seen once under load, with a
  // plain KafkaJS producer, as 16 "duplicated" enriched records that were really
  // 16 duplicated inputs).
  const producer = kit.producer()
  await producer.connect()
  try {
    for (let i = 0; i < messages.length; i += 500)
      await producer.send({ topic, messages: messages.slice(i, i + 500) })
    if (rawBytes.length > 0) await producer.send({ topic, messages: rawBytes })
  } finally {
    await producer.disconnect()
  }
}

/**
 * Encodes a value that passes Avro but breaks a RawTransaction rule: avsc can
 * encode it, the contract check in ingest refuses it.
 */
export async function encodeUnchecked(
  serde: AvroSerde,
  topic: string,
  value: RawTransaction,
): Promise<Buffer> {
  const codec = serde.topic(topic, 'RawTransaction')
  const id = await codec.register()
  const body = codec.schema.type.toBuffer(value)
  const header = Buffer.alloc(5)
  header.writeInt32BE(id, 1)
  return Buffer.concat([header, body])
}

/** Committed offsets of `groupId` on `topic` have reached the topic's end on every partition. */
export async function consumedToEnd(admin: Admin, groupId: string, topic: string): Promise<boolean> {
  const [ends, committed] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId, topics: [topic] }),
  ])
  const done = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]))
  return ends.every((e) => (done.get(e.partition) ?? -1n) >= BigInt(e.high))
}

export interface Outcomes {
  enriched: Map<string, EnrichedTransaction[]>
  dlq: Map<string, { code: string | undefined; count: number }>
  /** Keys seen on either topic more than once, or on both. */
  duplicates: string[]
  /** Where each enriched record of a duplicated key sits (partition@offset), for diagnosis. */
  duplicatePositions: Record<string, string[]>
  total: number
}

/** Everything on the enriched topic and the DLQ, read committed, by transaction id. */
export async function readOutcomes(kafka: Kafka, serde: AvroSerde, topics: IngestTopics): Promise<Outcomes> {
  const codec = serde.topic(topics.enriched, 'EnrichedTransaction')
  const [enrichedRecords, dlqRecords] = await Promise.all([
    readTopic(kafka, topics.enriched, { timeoutMs: 60_000 }),
    readTopic(kafka, topics.dlq, { timeoutMs: 60_000 }),
  ])
  const enriched = new Map<string, EnrichedTransaction[]>()
  const positions = new Map<string, string[]>()
  for (const r of enrichedRecords) {
    const value = await codec.decode(r.value)
    enriched.set(value.transactionId, [...(enriched.get(value.transactionId) ?? []), value])
    positions.set(value.transactionId, [
      ...(positions.get(value.transactionId) ?? []),
      `${r.partition}@${r.offset}`,
    ])
  }
  const dlq = new Map<string, { code: string | undefined; count: number }>()
  for (const r of dlqRecords) {
    const key = r.key?.toString('utf8') ?? '<null>'
    const prev = dlq.get(key)
    dlq.set(key, { code: readDlqHeaders(r.headers).errorCode, count: (prev?.count ?? 0) + 1 })
  }
  const duplicates = [
    ...[...enriched].filter(([, list]) => list.length > 1).map(([id]) => id),
    ...[...dlq].filter(([id, d]) => d.count > 1 || enriched.has(id)).map(([id]) => id),
  ]
  const duplicatePositions = Object.fromEntries(duplicates.map((id) => [id, positions.get(id) ?? []]))
  return { enriched, dlq, duplicates, duplicatePositions, total: enrichedRecords.length + dlqRecords.length }
}

export function testKafkaEnv(): { KAFKA_BROKERS: string; SCHEMA_REGISTRY_URL: string } {
  return { KAFKA_BROKERS: inject('kafkaBrokers').join(','), SCHEMA_REGISTRY_URL: inject('registryUrl') }
}

/** Sets the enrichment simulator's faults (its /__admin/faults), or clears them with null. */
export async function setSimFaults(sim: EnrichmentSim, faults: Record<string, unknown> | null): Promise<void> {
  const res = await fetch(
    `${sim.url}/__admin/faults`,
    faults === null ? { method: 'DELETE' } : { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(faults) },
  )
  if (!res.ok) throw new Error(`faults answered ${res.status}: ${await res.text()}`)
}
