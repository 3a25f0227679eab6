import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { createLogger } from './logger.ts'
import { counter, createMetricsRegistry } from './metrics.ts'
import { Readiness } from './readiness.ts'
import { startHealthServer, type HealthServer } from './health-server.ts'
import { GracefulShutdown } from './shutdown.ts'

function captureLogger() {
  const stream = new PassThrough()
  const lines: Record<string, unknown>[] = []
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>)
  })
  return { logger: createLogger({ name: 't', destination: stream }), lines }
}

describe('createLogger', () => {
  it('redacts secrets nested in logged objects', () => {
    const { logger, lines } = captureLogger()
    logger.info({ client: { clientSecret: 's3cr3t', id: 'c1' }, headers: { authorization: 'Bearer abc' }, refresh_token: 'r' }, 'hello')
    logger.flush()
    const text = JSON.stringify(lines)
    expect(text).not.toContain('s3cr3t')
    expect(text).not.toContain('Bearer abc')
    expect(lines[0]).toMatchObject({ level: 'info', service: 't', client: { id: 'c1', clientSecret: '[REDACTED]' }, refresh_token: '[REDACTED]' })
  })
})

describe('health server', () => {
  let server: HealthServer | undefined
  afterEach(async () => server?.close())

  it('serves liveness, readiness with reasons, and metrics', async () => {
    const registry = createMetricsRegistry({ service: 't', defaultMetrics: false })
    counter(registry, 'tep_test_total', 'test').inc(3)
    const readiness = new Readiness()
    readiness.register('table', 'catching up')
    server = await startHealthServer({ port: 0, host: '127.0.0.1', registry, readiness })

    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    const notReady = await fetch(`${server.url}/readyz`)
    expect(notReady.status).toBe(503)
    expect(await notReady.json()).toMatchObject({ ready: false, checks: { table: { ready: false, detail: 'catching up' } } })

    readiness.set('table', true)
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    expect(metrics).toContain('tep_test_total{service="t"} 3')
    expect((await fetch(`${server.url}/nope`)).status).toBe(404)
  })

  it('masks card numbers and IBANs in the readiness details, like log lines', async () => {
    const readiness = new Readiness()
    readiness.set('enrichment-api', false, 'GET /v5/shops answered 400: cardBin 4111111111111111 12/27 invalid; debtor CZ6508000000192000145399 EUR; payee cz65-0800-0000-1920-0014-5399')
    server = await startHealthServer({ port: 0, host: '127.0.0.1', registry: createMetricsRegistry({ service: 't', defaultMetrics: false }), readiness })
    const text = await (await fetch(`${server.url}/readyz`)).text()
    expect(text).not.toContain('4111111111111111')
    expect(text).not.toContain('CZ6508000000192000145399')
    // Followed by an upper-case word, and lower case with dashes (third review).
    expect(text).toContain('debtor CZ******************5399 EUR; payee cz**-****-****-****-****-5399')
    // The expiry joins the chain (any separator joins digits): more than the middle is hidden.
    expect(text).toContain('411111********** 12/27')
  })
})

describe('GracefulShutdown', () => {
  it('runs steps once, in reverse order, even when called twice', async () => {
    const { logger } = captureLogger()
    const order: string[] = []
    const sd = new GracefulShutdown({ logger, exit: () => {} })
    sd.add('health', async () => void order.push('health')).add('consumer', async () => void order.push('consumer'))
    await Promise.all([sd.shutdown(), sd.shutdown()])
    expect(order).toEqual(['consumer', 'health'])
  })

  it('reports a failed step after running the others', async () => {
    const { logger } = captureLogger()
    const order: string[] = []
    const sd = new GracefulShutdown({ logger, exit: () => {} })
    sd.add('a', async () => void order.push('a')).add('b', async () => {
      throw new Error('boom')
    })
    await expect(sd.shutdown()).rejects.toMatchObject({ code: 'SHUTDOWN_INCOMPLETE', details: { failedSteps: ['b'] } })
    expect(order).toEqual(['a'])
  })
})
