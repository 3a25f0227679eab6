/**
 * The hop that bank-sync (bank page -> raw) and the invalidation poller
 * (invalidation page -> refresher -> compacted topics) make: a transactional
 * writer's page is one `send` span whose trace context every record of the
 * page carries; the exactly-once pipeline that consumes them (the ingest, the
 * refresher) processes each under that trace, and what it writes carries it
 * on. One trace from the page to the consumer's outputs, over two Kafka hops.
 */
import { SpanKind } from '@opentelemetry/api'
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace'
import { createTransactionalWriter, RECORD_HEADERS_GETTER, type TransactionalWriter } from '@tep/kafka'
import { startTracing, type Tracing } from '@tep/tracing'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { CommitCounter, pipelineKafka, pipelineTopics, startPipeline } from '../kafka/pipeline-harness.ts'
import { createKafkaTestKit } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'

const kit = createKafkaTestKit()
const exporter = new InMemorySpanExporter()
let tracing: Tracing
const closers: Array<() => Promise<void>> = []

beforeAll(() => {
  tracing = startTracing({ OTEL_TRACES_EXPORTER: 'otlp' }, { serviceName: 'page-to-pipeline', exporters: [exporter] })
})

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined)
  await kit.disconnectAll()
  await tracing?.shutdown()
})

function traceIdOf(headers: Parameters<typeof RECORD_HEADERS_GETTER.get>[0]): string | undefined {
  const value = RECORD_HEADERS_GETTER.get(headers, 'traceparent')
  return typeof value === 'string' ? value.split('-')[1] : undefined
}

it("carries a written page's trace through the consuming pipeline to the records it writes", async () => {
  const topics = await pipelineTopics(kit, 'tracing-page', 2)
  const kafka = pipelineKafka()
  const writer: TransactionalWriter = createTransactionalWriter(kafka, { transactionalId: `${topics.prefix}.writer`, transactionTimeoutMs: 20_000 })
  closers.push(() => writer.close())
  await writer.run((tx) =>
    tx.send(topics.input, [
      { key: 'a', value: Buffer.from('page item a') },
      { key: 'b', value: Buffer.from('page item b') },
      { key: 'c', value: Buffer.from('page item c') },
    ]),
  )
  await tracing.forceFlush()
  const send = exporter.getFinishedSpans().find((s) => s.name === 'send')
  expect(send, 'the page is a send span').toBeDefined()
  expect(send!.kind).toBe(SpanKind.PRODUCER)
  expect(send!.attributes).toMatchObject({ 'tep.kafka.transactional_id': `${topics.prefix}.writer`, 'messaging.batch.message_count': 3 })
  const pageTrace = send!.spanContext().traceId
  const commit = exporter.getFinishedSpans().find((s) => s.name === 'commit' && s.parentSpanContext?.spanId === send!.spanContext().spanId)
  expect(commit, 'EndTxn is a commit span under the send').toBeDefined()

  const written = await readTopic(kit.kafka, topics.input)
  expect(written.map((r) => traceIdOf(r.headers))).toEqual([pageTrace, pageTrace, pageTrace])

  const counter = new CommitCounter()
  const { pipeline, started } = startPipeline(
    kafka,
    topics,
    { transform: (record) => ({ topic: topics.output, key: record.key, value: Buffer.from(`done: ${record.value?.toString()}`) }) },
    { onCommitted: counter.hook },
  )
  closers.push(() => pipeline.stop())
  await started
  await counter.reach(3)
  await pipeline.stop()
  await tracing.forceFlush()

  const outputs = await readTopic(kit.kafka, topics.output)
  expect(outputs).toHaveLength(3)
  for (const out of outputs) expect(traceIdOf(out.headers), `output ${out.key?.toString()}`).toBe(pageTrace)
  const processSpans = exporter.getFinishedSpans().filter((s) => s.name === `process ${topics.input}`)
  expect(processSpans).toHaveLength(3)
  for (const p of processSpans) {
    expect(p.spanContext().traceId).toBe(pageTrace)
    expect(p.parentSpanContext?.spanId, 'each record is processed under the page').toBe(send!.spanContext().spanId)
  }
})
