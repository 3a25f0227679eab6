import { context, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api'
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace'
import { startTracing, type Tracing } from '@tep/tracing'
import { afterEach, expect, it } from 'vitest'
import { installedTracer } from '../trace-context.ts'
import { WriterTransactionTrace } from './writer-tracing.ts'

let tracing: Tracing | undefined
afterEach(async () => {
  await tracing?.shutdown()
  tracing = undefined
})

it("gives a writer transaction's records its send span's trace context; a record with its own keeps it", async () => {
  const exporter = new InMemorySpanExporter()
  tracing = startTracing({}, { serviceName: 'test', exporters: [exporter] })
  const tracer = installedTracer('t')!
  const page = tracer.startSpan('sync page')
  const own = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`
  const traced = context.with(trace.setSpan(ROOT_CONTEXT, page), () => new WriterTransactionTrace(tracer, 'bank-sync-0'))
  const messages = traced.traced([
    { key: 'a', value: null },
    { key: 'b', value: null, headers: { traceparent: own } },
  ])
  await traced.commit(() => Promise.resolve())
  traced.end()
  const send = exporter.getFinishedSpans().find((s) => s.name === 'send')!
  const commit = exporter.getFinishedSpans().find((s) => s.name === 'commit')!
  expect(send.kind).toBe(SpanKind.PRODUCER)
  expect(send.parentSpanContext?.spanId).toBe(page.spanContext().spanId)
  expect(send.attributes).toMatchObject({ 'tep.kafka.transactional_id': 'bank-sync-0', 'messaging.batch.message_count': 2 })
  expect(commit.parentSpanContext?.spanId).toBe(send.spanContext().spanId)
  expect(messages[0]!.headers?.traceparent).toBe(`00-${page.spanContext().traceId}-${send.spanContext().spanId}-01`)
  expect(messages[1]!.headers?.traceparent).toBe(own)
})
