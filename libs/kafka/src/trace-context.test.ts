import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api'
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace'
import { startTracing, type Tracing } from '@tep/tracing'
import { afterEach, describe, expect, it } from 'vitest'
import { extractRecordContext, installedTracer, withTraceContext } from './trace-context.ts'

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const SPAN_ID = '00f067aa0ba902b7'
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`

let tracing: Tracing | undefined
const on = (): Tracing => (tracing = startTracing({}, { serviceName: 'test', exporters: [new InMemorySpanExporter()] }))
afterEach(async () => {
  await tracing?.shutdown()
  tracing = undefined
})

describe('installedTracer', () => {
  it('is undefined while no tracer provider is installed, so callers skip every tracing step', () => {
    expect(installedTracer('t')).toBeUndefined()
    // The API's no-op tracer would still give span objects: that is what the check avoids.
    expect(trace.getTracer('t').startSpan('x').isRecording()).toBe(false)
  })

  it('is the provider tracer once one is installed, and undefined again after shutdown', async () => {
    on()
    expect(installedTracer('t')?.startSpan('x').isRecording()).toBe(true)
    await tracing!.shutdown()
    expect(installedTracer('t')).toBeUndefined()
  })

  it('stays undefined when OTEL_TRACES_EXPORTER is unset or none', () => {
    expect(startTracing({}, { serviceName: 'test' }).enabled).toBe(false)
    expect(startTracing({ OTEL_TRACES_EXPORTER: 'none' }, { serviceName: 'test' }).enabled).toBe(false)
    expect(installedTracer('t')).toBeUndefined()
  })
})

describe('trace context in Kafka record headers', () => {
  it('reads traceparent and tracestate from header bytes, as a consumed record has them', () => {
    on()
    const ctx = extractRecordContext({ traceparent: Buffer.from(TRACEPARENT), tracestate: Buffer.from('a=1') })
    const span = trace.getSpanContext(ctx)
    expect(span).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1, isRemote: true })
    expect(span?.traceState?.get('a')).toBe('1')
  })

  it('takes the first of a repeated traceparent header', () => {
    on()
    const other = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`
    expect(trace.getSpanContext(extractRecordContext({ traceparent: [TRACEPARENT, other] }))?.traceId).toBe(TRACE_ID)
  })

  it('gives the root context for a record without (or with a malformed) traceparent', () => {
    on()
    expect(extractRecordContext({})).toBe(ROOT_CONTEXT)
    expect(trace.getSpanContext(extractRecordContext({ traceparent: 'garbage' }))).toBeUndefined()
  })

  it('writes the active span context into a copy of the headers, keeping the others', () => {
    on()
    const span = installedTracer('t')!.startSpan('s')
    const headers = { 'tep-correction': 'yes', traceparent: 'stale' }
    const out = context.with(trace.setSpan(ROOT_CONTEXT, span), () => withTraceContext(headers))
    expect(out).toEqual({ 'tep-correction': 'yes', traceparent: `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01` })
    expect(headers.traceparent, 'the given headers are not changed').toBe('stale')
  })

  it('round-trips: what is written is what the next consumer reads', () => {
    on()
    const written = withTraceContext(undefined, extractRecordContext({ traceparent: TRACEPARENT, tracestate: 'a=1' }))
    expect(written).toEqual({ traceparent: TRACEPARENT, tracestate: 'a=1' })
  })
})
