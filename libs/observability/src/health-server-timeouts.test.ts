import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_HEALTH_SERVER_TIMEOUTS, startHealthServer, type HealthServer } from './health-server.ts'
import { createMetricsRegistry } from './metrics.ts'
import { Readiness } from './readiness.ts'

let server: HealthServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe('the health server limits slow and idle clients', () => {
  it('has explicit, short defaults (Node: 60 s for headers, 5 min for a request)', () => {
    expect(DEFAULT_HEALTH_SERVER_TIMEOUTS.headersTimeoutMs).toBeLessThanOrEqual(10_000)
    expect(DEFAULT_HEALTH_SERVER_TIMEOUTS.requestTimeoutMs).toBeLessThanOrEqual(30_000)
    expect(DEFAULT_HEALTH_SERVER_TIMEOUTS.keepAliveTimeoutMs).toBeLessThanOrEqual(10_000)
  })

  it('answers 408 and closes a connection whose headers never finish (slow-loris)', async () => {
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      registry: createMetricsRegistry({ service: 't', defaultMetrics: false }),
      readiness: new Readiness(),
      timeouts: { headersTimeoutMs: 200, requestTimeoutMs: 400 },
    })
    const socket = connect(server.port, '127.0.0.1')
    let received = ''
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ')
    // The test's own deadline (vitest's) is the failure on today's code: the socket stays open.
    await new Promise<void>((resolve) => socket.on('close', () => resolve()))
    expect(received).toMatch(/^HTTP\/1\.1 408/)
  })
})
