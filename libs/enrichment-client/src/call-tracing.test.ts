import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { context, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api'
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace'
import { startTracing, type Tracing } from '@tep/tracing'
import { afterEach, describe, expect, it } from 'vitest'
import { EnrichmentClient } from './enrichment-client.ts'

const closers: Array<() => Promise<void>> = []
let tracing: Tracing | undefined
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!()
  await tracing?.shutdown()
  tracing = undefined
})

/** A stand-in that answers every lookup 200 and keeps the headers it was sent. */
async function standIn(seen: IncomingHttpHeaders[]): Promise<string> {
  const server = createServer((req, res) => {
    seen.push(req.headers)
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ handle: 'h1', shop: { uid: 'S1' } }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

function client(url: string): EnrichmentClient {
  const c = new EnrichmentClient({ baseUrl: url, credentials: { type: 'basic', username: 'u', password: 'p' } })
  closers.push(() => c.close())
  return c
}

describe('the findBy call with tracing', () => {
  it('is a client span, child of the active span, and sends its trace context as traceparent', async () => {
    const exporter = new InMemorySpanExporter()
    tracing = startTracing({}, { serviceName: 'test', exporters: [exporter] })
    const seen: IncomingHttpHeaders[] = []
    const c = client(await standIn(seen))
    const record = trace.getTracer('test').startSpan('process raw')
    await context.with(trace.setSpan(ROOT_CONTEXT, record), () => c.findByCardTransaction({ merchantId: 'M1', description: 'x' }))
    const span = exporter.getFinishedSpans().find((s) => s.attributes['tep.enrichment.operation'] === 'enrichment.findByCardTransaction')!
    expect(span.kind).toBe(SpanKind.CLIENT)
    expect(span.parentSpanContext?.spanId).toBe(record.spanContext().spanId)
    expect(span.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.response.status_code': 200, 'server.address': '127.0.0.1' })
    // The query holds transaction data: the recorded URL has none.
    expect(span.attributes['url.full']).toMatch(/\/v5\/shops\/findByCardTransaction$/)
    expect(seen[0]!.traceparent).toBe(`00-${record.spanContext().traceId}-${span.spanContext().spanId}-01`)
    expect(seen[0]!.authorization).toMatch(/^Basic /)
  })

  it('sends no trace header and makes no span when no tracer provider is installed', async () => {
    const seen: IncomingHttpHeaders[] = []
    const c = client(await standIn(seen))
    await c.findByCardTransaction({ merchantId: 'M1', description: 'x' })
    expect(seen[0]!.traceparent).toBeUndefined()
  })
})
