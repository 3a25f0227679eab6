/**
 * With tracing on (@tep/tracing, an InMemorySpanExporter in place of OTLP),
 * each raw event that arrives with a W3C `traceparent` goes on in that trace
 * through the real ingest: its `process` span is a child of the producer's
 * span, the findBy call against the enrichment simulator and the output's
 * `create` span are children of it, the enriched record carries the same
 * trace id in its headers, and the transaction's `commit` span links to the
 * output with the transactional id as an attribute. Two events, two traces:
 * nothing of one leaks into the other. Run in both lookup modes: a batch
 * call that answers both is linked from each record's trace.
 */
import { randomBytes } from 'node:crypto'
import { SpanKind } from '@opentelemetry/api'
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace'
import type { EnrichmentClient } from '@tep/enrichment-client'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { createKafka, RECORD_HEADERS_GETTER } from '@tep/kafka'
import { createMetricsRegistry } from '@tep/observability'
import { startTracing, type Tracing } from '@tep/tracing'
import { startTransactionIngest, type TransactionIngest } from '@tep/transaction-ingest'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { readTopic } from '../support/read-topic.ts'
import { createKafkaTestKit } from '../support/kafka-test-kit.ts'
import { waitFor } from '../support/wait-for.ts'
import {
  consumedToEnd,
  createIngestTopics,
  fetchSamples,
  rawFromSample,
  registryForTests,
  representable,
  serdeForTests,
  simClient,
  startSim,
} from '../ingest/ingest-harness.ts'

const kit = createKafkaTestKit()
const registry = registryForTests()
const serde = serdeForTests(registry)
const exporter = new InMemorySpanExporter()
let tracing: Tracing
let sim: EnrichmentSim
let client: EnrichmentClient
const running: TransactionIngest[] = []

beforeAll(async () => {
  // First: the client and the pipeline look for a tracer provider when they are built.
  tracing = startTracing({ OTEL_TRACES_EXPORTER: 'otlp' }, { serviceName: 'transaction-ingest', exporters: [exporter] })
  sim = await startSim(37)
  client = simClient(sim)
})

afterAll(async () => {
  await Promise.allSettled(running.map((i) => i.stop()))
  await client?.close()
  await sim?.close()
  await kit.disconnectAll()
  await tracing?.shutdown()
})

interface Upstream {
  traceId: string
  spanId: string
}

const upstream = (): Upstream => ({ traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') })

function traceparentOf(headers: Parameters<typeof RECORD_HEADERS_GETTER.get>[0]): { traceId: string; spanId: string } | undefined {
  const value = RECORD_HEADERS_GETTER.get(headers, 'traceparent')
  const m = typeof value === 'string' ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(value) : null
  return m === null ? undefined : { traceId: m[1]!, spanId: m[2]! }
}

const only = (spans: ReadableSpan[], what: string): ReadableSpan => {
  expect(spans.map((s) => s.name), what).toHaveLength(1)
  return spans[0]!
}

describe.each(['single', 'batch'] as const)('tracing through the ingest in %s lookup mode', (mode) => {
  it('continues each raw event trace through consume, findBy and produce, and links the commit to it', async () => {
    const topics = await createIngestTopics(kit, `tracing-${mode}`, 1)
    const samples = (await fetchSamples(sim, 'card', 'found', 10, mode === 'single' ? 1 : 2)).filter(representable)
    const events = samples.slice(0, 2).map((s, i) => rawFromSample(s, `tracing-${mode}-${i}`))
    expect(events).toHaveLength(2)
    const parents = events.map(() => upstream())
    const codec = serde.topic(topics.input, 'RawTransaction')
    const producer = kit.producer()
    await producer.connect()
    try {
      await producer.send({
        topic: topics.input,
        messages: await Promise.all(
          events.map(async (e, i) => ({
            key: e.transactionId,
            value: await codec.encode(e),
            headers: { traceparent: `00-${parents[i]!.traceId}-${parents[i]!.spanId}-01`, tracestate: 'vendor=upstream' },
          })),
        ),
      })
    } finally {
      await producer.disconnect()
    }

    const kafka = createKafka({ brokers: inject('kafkaBrokers'), clientId: `${topics.groupId}-client`, logLevel: 'error' })
    const ingest = await startTransactionIngest({
      kafka,
      schemaRegistry: registry,
      client,
      topics,
      lookupMode: mode,
      completeLookups: 'never',
      batchLingerMs: 5,
      groupId: topics.groupId,
      transactionalIdPrefix: topics.transactionalIdPrefix,
      consumer: { sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 200 },
      metricsRegistry: createMetricsRegistry({ service: `tracing-${mode}`, defaultMetrics: false }),
    })
    running.push(ingest)
    const admin = kit.admin()
    await admin.connect()
    await waitFor('ingest to consume every raw record', () => consumedToEnd(admin, topics.groupId, topics.input), {
      timeoutMs: 60_000,
    })
    await ingest.stop()
    await tracing.forceFlush()

    const enriched = await readTopic(kit.kafka, topics.enriched, { timeoutMs: 60_000 })
    expect(enriched).toHaveLength(events.length)
    const spans = exporter.getFinishedSpans()
    const commits = spans.filter((s) => s.name === 'commit' && s.attributes['messaging.consumer.group.name'] === topics.groupId)
    expect(commits.length, 'commit spans of this ingest').toBeGreaterThan(0)

    for (const [i, event] of events.entries()) {
      const parent = parents[i]!
      const record = enriched.find((r) => r.key?.toString('utf8') === event.transactionId)
      expect(record, `enriched record of ${event.transactionId}`).toBeDefined()
      const carried = traceparentOf(record!.headers)
      expect(carried?.traceId, 'the enriched record carries the raw event trace id').toBe(parent.traceId)
      expect(RECORD_HEADERS_GETTER.get(record!.headers, 'tracestate')).toBe('vendor=upstream')

      const inTrace = spans.filter((s) => s.spanContext().traceId === parent.traceId)
      const processSpan = only(inTrace.filter((s) => s.name === `process ${topics.input}`), 'process spans')
      expect(processSpan.kind).toBe(SpanKind.CONSUMER)
      expect(processSpan.parentSpanContext?.spanId, 'process is a child of the upstream span').toBe(parent.spanId)
      expect(processSpan.attributes).toMatchObject({
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.destination.name': topics.input,
        'messaging.consumer.group.name': topics.groupId,
      })
      const processId = processSpan.spanContext().spanId

      if (mode === 'single') {
        const findBy = only(inTrace.filter((s) => s.attributes['tep.enrichment.operation'] === 'enrichment.findByCardTransaction'), 'findBy spans')
        expect(findBy.kind).toBe(SpanKind.CLIENT)
        expect(findBy.parentSpanContext?.spanId, 'findBy is a child of process').toBe(processId)
        expect(findBy.attributes['http.response.status_code']).toBe(200)
      } else {
        // One batch call answers records of several traces: a child of the record that opened
        // it, linked both ways with every other record in it.
        const batch = only(
          spans.filter(
            (s) => s.name === 'findBy batch' && (s.parentSpanContext?.spanId === processId || s.links.some((l) => l.context.spanId === processId)),
          ),
          'findBy batch spans of this record',
        )
        const batchId = batch.spanContext().spanId
        if (batch.parentSpanContext?.spanId !== processId)
          expect(processSpan.links.map((l) => l.context.spanId), 'process links to the batch call').toContain(batchId)
        const findBy = only(
          spans.filter((s) => s.attributes['tep.enrichment.operation'] === 'enrichment.findByCardTransactionBatch' && s.parentSpanContext?.spanId === batchId),
          'findBy calls of the batch',
        )
        expect(findBy.kind).toBe(SpanKind.CLIENT)
        expect(findBy.attributes['http.response.status_code']).toBe(200)
      }

      const create = only(inTrace.filter((s) => s.name === `create ${topics.enriched}`), 'create spans of the enriched record')
      expect(create.kind).toBe(SpanKind.PRODUCER)
      expect(create.parentSpanContext?.spanId, 'create is a child of process').toBe(processId)
      expect(carried?.spanId, 'the enriched record carries its create span').toBe(create.spanContext().spanId)

      const tableRead = only(inTrace.filter((s) => s.name === 'read merchant tables'), 'table read spans')
      expect(tableRead.parentSpanContext?.spanId, 'the table read is a child of process').toBe(processId)

      const commit = only(
        commits.filter((c) => c.links.some((l) => l.context.spanId === create.spanContext().spanId)),
        'commit spans linking the enriched record',
      )
      expect(commit.links.find((l) => l.context.spanId === create.spanContext().spanId)?.context.traceId).toBe(parent.traceId)
      expect(String(commit.attributes['tep.kafka.transactional_id'])).toMatch(new RegExp(`^${topics.transactionalIdPrefix}-`))
      expect(commit.attributes['messaging.operation.type']).toBe('settle')
    }
  })
})
