import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api'
import { afterEach, describe, expect, it } from 'vitest'
import { startTracing, type Tracing } from './start-tracing.ts'

let tracing: Tracing | undefined
const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await tracing?.shutdown()
  tracing = undefined
  while (closers.length > 0) await closers.pop()!()
})

/** A stand-in OTLP/HTTP collector: keeps what it is sent. */
async function collector(): Promise<{ url: string; received: { path: string; headers: IncomingHttpHeaders; bytes: number }[] }> {
  const received: { path: string; headers: IncomingHttpHeaders; bytes: number }[] = []
  const server = createServer((req, res) => {
    let bytes = 0
    req.on('data', (chunk: Buffer) => (bytes += chunk.length))
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, bytes })
      res.writeHead(200, { 'content-type': 'application/x-protobuf' })
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received }
}

describe('startTracing', () => {
  it('installs nothing when OTEL_TRACES_EXPORTER is unset: the API stays a no-op and propagates nothing', () => {
    tracing = startTracing({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' }, { serviceName: 'svc' })
    expect(tracing.enabled).toBe(false)
    expect(trace.getTracer('t').startSpan('s').isRecording()).toBe(false)
    const carrier: Record<string, string> = {}
    propagation.inject(ROOT_CONTEXT, carrier)
    expect(carrier).toEqual({})
  })

  it('exports spans as OTLP/HTTP protobuf to {OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces, with the configured headers', async () => {
    const c = await collector()
    tracing = startTracing(
      { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: c.url, OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=k1' },
      { serviceName: 'svc' },
    )
    expect(tracing.enabled).toBe(true)
    trace.getTracer('t').startSpan('s').end()
    await tracing.forceFlush()
    expect(c.received).toHaveLength(1)
    expect(c.received[0]).toMatchObject({ path: '/v1/traces', headers: { 'content-type': 'application/x-protobuf', 'x-api-key': 'k1' } })
    expect(c.received[0]!.bytes).toBeGreaterThan(0)
  })

  it('samples by trace id ratio: always_off records nothing, yet a sampled parent is kept by the parent-based sampler', () => {
    tracing = startTracing({ OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, { serviceName: 'svc' })
    const tracer = trace.getTracer('t')
    expect(tracer.startSpan('root').isRecording(), 'ratio 0: a new trace is dropped').toBe(false)
    const sampledParent = propagation.extract(ROOT_CONTEXT, { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` })
    expect(tracer.startSpan('child', {}, sampledParent).isRecording(), 'an upstream-sampled trace is recorded').toBe(true)
  })

  it('uninstalls the provider, the propagator and the context manager on shutdown', async () => {
    tracing = startTracing({ OTEL_TRACES_EXPORTER: 'console' }, { serviceName: 'svc' })
    await tracing.shutdown()
    expect(trace.getTracer('t').startSpan('s').isRecording()).toBe(false)
    const carrier: Record<string, string> = {}
    propagation.inject(propagation.extract(ROOT_CONTEXT, { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` }), carrier)
    expect(carrier).toEqual({})
  })
})

describe('startTracing with onConfigProblem', () => {
  it('hands a value it does not understand to onConfigProblem, naming the variable, instead of throwing', () => {
    const told: string[] = []
    const exit = (variable: string, problem: string): never => {
      told.push(`${variable}: ${problem}`)
      throw new Error('exited')
    }
    expect(() => startTracing({ OTEL_TRACES_EXPORTER: 'zipkin' }, { serviceName: 't', onConfigProblem: exit })).toThrow('exited')
    expect(told).toEqual(['OTEL_TRACES_EXPORTER: expected otlp, console or none (comma-separated), got "zipkin"'])
  })
})
