import { SpanKind } from '@opentelemetry/api'
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace'
import { PipelineError } from '@tep/errors'
import { startTracing, type Tracing } from '@tep/tracing'
import { afterEach, describe, expect, it } from 'vitest'
import type { OutputRecord, PipelineRecord, Transform } from '../pipeline-types.ts'
import type { Taken } from './partition-state.ts'
import { pipelineTracing } from './pipeline-tracing.ts'

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const SPAN_ID = '00f067aa0ba902b7'
const record = (headers: PipelineRecord['headers'] = { traceparent: Buffer.from(`00-${TRACE_ID}-${SPAN_ID}-01`) }): PipelineRecord => ({
  topic: 'raw',
  partition: 2,
  offset: '41',
  key: null,
  value: Buffer.from('v'),
  headers,
  timestamp: '0',
})
const ctx = { attempt: 1, signal: new AbortController().signal }

let tracing: Tracing | undefined
let exporter: InMemorySpanExporter
const on = (): void => {
  exporter = new InMemorySpanExporter()
  tracing = startTracing({}, { serviceName: 'test', exporters: [exporter] })
}
afterEach(async () => {
  await tracing?.shutdown()
  tracing = undefined
})

describe('pipelineTracing', () => {
  it('is undefined without a tracer provider: the loop keeps its own transform and commit', () => {
    expect(pipelineTracing('g', 'tx-1')).toBeUndefined()
  })

  it("runs the transform in the record's process span, a child of the trace the record carries", async () => {
    on()
    const outputs: OutputRecord[] = [{ topic: 'enriched', key: 'k', value: Buffer.from('e'), headers: { 'tep-correction': 'c' } }]
    const transform: Transform = () => Promise.resolve(outputs)
    const wrapped = pipelineTracing('g', 'tx-1')!.wrap(transform)
    const result = (await wrapped(record(), ctx)) as OutputRecord[]
    const spans = exporter.getFinishedSpans()
    const process = spans.find((s) => s.name === 'process raw')!
    const create = spans.find((s) => s.name === 'create enriched')!
    expect(process.kind).toBe(SpanKind.CONSUMER)
    expect(process.spanContext().traceId).toBe(TRACE_ID)
    expect(process.parentSpanContext?.spanId).toBe(SPAN_ID)
    expect(process.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.destination.name': 'raw',
      'messaging.destination.partition.id': '2',
      'messaging.kafka.offset': 41,
      'messaging.consumer.group.name': 'g',
    })
    expect(create.kind).toBe(SpanKind.PRODUCER)
    expect(create.parentSpanContext?.spanId).toBe(process.spanContext().spanId)
    expect(result[0]!.headers).toEqual({ 'tep-correction': 'c', traceparent: `00-${TRACE_ID}-${create.spanContext().spanId}-01` })
  })

  it('keeps a synchronous transform synchronous (a table hit makes no promise)', () => {
    on()
    const wrapped = pipelineTracing('g', 'tx-1')!.wrap(() => ({ topic: 'out', key: null, value: null }))
    const result = wrapped(record(), ctx)
    expect(result).not.toBeInstanceOf(Promise)
    expect((result as OutputRecord).headers?.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-`))
  })

  it('starts a new trace for a record without traceparent', () => {
    on()
    pipelineTracing('g', 'tx-1')!.wrap(() => undefined)(record({}), ctx)
    const process = exporter.getFinishedSpans()[0]!
    expect(process.parentSpanContext).toBeUndefined()
    expect(process.spanContext().traceId).not.toBe(TRACE_ID)
  })

  it('marks the process span failed with the error code, and rethrows', async () => {
    on()
    const error = new PipelineError('bad record', { code: 'RAW_INVALID_FIELD' })
    await expect(pipelineTracing('g', 'tx-1')!.wrap(() => Promise.reject(error))(record(), ctx)).rejects.toBe(error)
    expect(exporter.getFinishedSpans()[0]!.status).toEqual({ code: 2, message: 'RAW_INVALID_FIELD' })
  })

  it("commits inside a commit span linked to every output's creation, with the transactional id", async () => {
    on()
    const tracingOn = pipelineTracing('g', 'tx-1')!
    const out = (await tracingOn.wrap(() => Promise.resolve({ topic: 'enriched', key: null, value: null }))(record(), ctx)) as OutputRecord
    const live = [{ done: [{ outcome: { kind: 'outputs', record: record(), outputs: [out] } }] }] as unknown as Taken[]
    let ran = false
    await tracingOn.commit(live, 1, () => {
      ran = true
      return Promise.resolve()
    })
    expect(ran).toBe(true)
    const create = exporter.getFinishedSpans().find((s) => s.name === 'create enriched')!
    const commit = exporter.getFinishedSpans().find((s) => s.name === 'commit')!
    expect(commit.links.map((l) => l.context.spanId)).toEqual([create.spanContext().spanId])
    expect(commit.attributes).toMatchObject({ 'tep.kafka.transactional_id': 'tx-1', 'messaging.batch.message_count': 1, 'tep.kafka.outputs': 1 })
    expect(commit.parentSpanContext).toBeUndefined()
  })
})
