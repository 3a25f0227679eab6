import { describe, expect, it } from 'vitest'
import { cleanups, startServer, json, fakeClock, client } from './__fixtures__/http-test-server.ts'
import type { ResponseInfo } from './client-options.ts'
import { createRequestLimiter } from './rate-limits.ts'

describe('HttpClient limits and hooks', () => {
  it('keeps concurrent requests at or below maxConcurrent for a shared limiter', async () => {
    let inFlight = 0
    let maxInFlight = 0
    const srv = await startServer((_req, res) => {
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      // Hold each answer briefly so that requests the limiter let through overlap.
      setTimeout(() => {
        inFlight--
        res.end('{}')
      }, 20)
    })
    const limiter = createRequestLimiter({ maxConcurrent: 2 })
    cleanups.push(() => limiter.stop())
    const a = client({ baseUrl: srv.url, limiter })
    const b = client({ baseUrl: srv.url, limiter })
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? a : b).request({ operation: 'o', method: 'GET', path: `/${i}` }),
      ),
    )
    expect(srv.seen).toHaveLength(10)
    expect(maxInFlight).toBe(2)
  })

  it('reports every attempt to onRequest/onResponse with status or error code', async () => {
    const srv = await startServer(json(503, {}), json(200, {}))
    const requests: number[] = []
    const responses: ResponseInfo[] = []
    await client({
      baseUrl: srv.url,
      clock: fakeClock(),
      hooks: {
        onRequest: (i) => requests.push(i.attempt),
        onResponse: (i) => responses.push(i),
      },
    }).request({ operation: 'enrichment.getShop', method: 'GET', path: '/v5/shops/x' })
    expect(requests).toEqual([1, 2])
    expect(responses.map((r) => [r.operation, r.attempt, r.status])).toEqual([
      ['enrichment.getShop', 1, 503],
      ['enrichment.getShop', 2, 200],
    ])
    expect(responses.every((r) => r.durationMs >= 0)).toBe(true)
  })

  it('survives a throwing hook', async () => {
    const srv = await startServer(json(200, {}))
    const warnings: object[] = []
    const res = await client({
      baseUrl: srv.url,
      hooks: {
        onRequest: () => {
          throw new Error('metrics broke')
        },
      },
      logger: { warn: (o) => warnings.push(o), debug: () => {} },
    }).request({ operation: 'o', method: 'GET', path: '/' })
    expect(res.status).toBe(200)
    expect(warnings).toHaveLength(1)
  })
})
