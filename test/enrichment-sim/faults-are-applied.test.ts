import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startEnrichmentSim } from '@tep/enrichment-sim'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { waitFor } from '../support/wait-for.ts'
import { admin, bearer, call, samples, token } from './sim-test-kit.ts'
import type { RawRequest, Sample } from './sim-test-kit.ts'

interface Stats {
  requests: { total: number; byOperation: Record<string, number>; byStatus: Record<string, number> }
  tokenRequests: number
  concurrency: { current: number; max: number }
  faultsInjected: { error: number; throttle: number; reset: number; delayed: number }
}

let sim: EnrichmentSim
let accessToken: string
let lookup: RawRequest

beforeAll(async () => {
  sim = await startEnrichmentSim({ seed: 31, shops: 2_000, merchants: 200 })
  accessToken = await token(sim)
  const [sample] = (await samples(sim, { count: 1, kind: 'card', outcome: 'found' })) as [Sample]
  lookup = { path: '/v5/shops/findByCardTransaction', query: sample.input, headers: bearer(accessToken) }
})

beforeEach(async () => {
  await admin(sim, 'DELETE', '/__admin/faults')
})

afterAll(async () => {
  await sim?.close()
})

const stats = (): Promise<Stats> => admin<Stats>(sim, 'GET', '/__admin/stats')

describe('faults set through /__admin/faults', () => {
  it('fails exactly the next N requests with the configured status, then recovers', async () => {
    await admin(sim, 'PUT', '/__admin/faults', { errorRate: 1, errorStatus: 502, count: 2 })
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await call(sim, lookup)).status)
    expect(statuses).toEqual([502, 502, 200])
  })

  it('fails about the configured share of requests', async () => {
    await admin(sim, 'PUT', '/__admin/faults', { errorRate: 0.3 })
    let failed = 0
    for (let i = 0; i < 200; i++) if ((await call(sim, lookup)).status === 503) failed++
    expect(failed).toBeGreaterThan(30)
    expect(failed).toBeLessThan(90)
  })

  it('throttles with 429 and the configured Retry-After', async () => {
    await admin(sim, 'PUT', '/__admin/faults', { throttleRate: 1, retryAfterSeconds: 3 })
    const res = await call(sim, lookup)
    expect(res.status).toBe(429)
    expect(res.headers['retry-after']).toBe('3')
    expect(res.body).toMatchObject({ error: { code: 'RATE_LIMITED' } })
  })

  it('resets connections without an answer, and the next connection works', async () => {
    await admin(sim, 'PUT', '/__admin/faults', { resetRate: 1, count: 1 })
    await expect(call(sim, lookup)).rejects.toThrow(/other side closed|socket|ECONNRESET/i)
    expect((await call(sim, lookup)).status).toBe(200)
    expect((await stats()).faultsInjected.reset).toBe(1)
    await waitFor('the reset request to leave the in-flight count', async () => (await stats()).concurrency.current === 0)
  })

  it('adds latency, only on the paths it is aimed at', async () => {
    await admin(sim, 'PUT', '/__admin/faults', { latency: { distribution: 'fixed', ms: 300 }, pathPrefix: '/v5/shops/' })
    const started = performance.now()
    expect((await call(sim, lookup)).status).toBe(200)
    expect(performance.now() - started).toBeGreaterThanOrEqual(290)
    const before = (await stats()).faultsInjected.delayed
    expect((await call(sim, { path: '/v5/invalidations', headers: bearer(accessToken) })).status).toBe(200)
    expect((await stats()).faultsInjected.delayed).toBe(before)
  })

  it('draws latency from a lognormal distribution', async () => {
    await admin(sim, 'PUT', '/__admin/faults', { latency: { distribution: 'lognormal', medianMs: 2, sigma: 0.5 } })
    const before = (await stats()).faultsInjected.delayed
    for (let i = 0; i < 10; i++) expect((await call(sim, lookup)).status).toBe(200)
    expect((await stats()).faultsInjected.delayed).toBe(before + 10)
  })

  it('revokes every token issued so far; a new one works', async () => {
    const old = await token(sim)
    await admin(sim, 'PUT', '/__admin/faults', { revokeTokens: true })
    const revoked = await call(sim, { ...lookup, headers: bearer(old) })
    expect(revoked.status).toBe(401)
    expect(revoked.body).toMatchObject({ error: { code: 'TOKEN_REVOKED' } })
    accessToken = await token(sim)
    lookup = { ...lookup, headers: bearer(accessToken) }
    expect((await call(sim, lookup)).status).toBe(200)
  })

  it('rejects invalid fault settings with a message naming the setting', async () => {
    const res = await call(sim, { method: 'PUT', path: '/__admin/faults', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ errorRate: 2 }) })
    expect(res.status).toBe(400)
    expect(JSON.stringify(res.body)).toMatch(/errorRate must be a number from 0 to 1/)
  })
})

describe('the simulator clock', () => {
  it('expires tokens after 300 s of simulator time', async () => {
    const fresh = await token(sim)
    await admin(sim, 'POST', '/__admin/clock', { advanceSeconds: 299 })
    expect((await call(sim, { ...lookup, headers: bearer(fresh) })).status).toBe(200)
    await admin(sim, 'POST', '/__admin/clock', { advanceSeconds: 1 })
    const expired = await call(sim, { ...lookup, headers: bearer(fresh) })
    expect(expired.status).toBe(401)
    expect(expired.body).toMatchObject({ error: { code: 'TOKEN_EXPIRED' } })
    expect(expired.headers['www-authenticate']).toMatch(/^Bearer/)
    accessToken = await token(sim)
    lookup = { ...lookup, headers: bearer(accessToken) }
  })
})

describe('stats', () => {
  it('count requests per operation, token requests, and the maximum in flight', async () => {
    await admin(sim, 'DELETE', '/__admin/stats')
    await admin(sim, 'PUT', '/__admin/faults', { latencyMs: 1_000, pathPrefix: '/v5/shops/' })
    await Promise.all(Array.from({ length: 8 }, () => call(sim, lookup)))
    await token(sim)
    const after = await stats()
    expect(after.concurrency.max).toBe(8)
    expect(after.requests.byOperation).toEqual({ findByCardTransaction: 8, getToken: 1 })
    expect(after.tokenRequests).toBe(1)
    // A status is counted when its connection reports the answer done, just after the client has it.
    await waitFor('nine answered requests in the stats', async () => (await stats()).requests.byStatus['200'] === 9)
    expect((await stats()).requests.byStatus).toEqual({ '200': 9 })
  })
})

describe('aggCount', () => {
  it('adds the records a client collapsed into a transfer lookup to the stats', async () => {
    const [transfer] = (await samples(sim, { count: 1, kind: 'transfer', outcome: 'found' })) as [Sample]
    const before = (await admin<{ aggregatedHits: number }>(sim, 'GET', '/__admin/stats')).aggregatedHits
    const res = await call(sim, { path: transfer.path, query: { ...transfer.input, aggCount: '4' }, headers: bearer(accessToken) })
    expect(res.status).toBe(200)
    expect((await admin<{ aggregatedHits: number }>(sim, 'GET', '/__admin/stats')).aggregatedHits).toBe(before + 4)
  })
})

describe('the per-credential rate limit', () => {
  it('answers 429 with Retry-After beyond N requests per second, per credential', async () => {
    const limited = await startEnrichmentSim({ seed: 31, shops: 2_000, merchants: 200, rateLimitPerSecond: 5 })
    try {
      const t = await token(limited)
      const results = await Promise.all(Array.from({ length: 20 }, () => call(limited, { ...lookup, headers: bearer(t) })))
      const throttled = results.filter((r) => r.status === 429)
      expect(throttled.length).toBeGreaterThan(0)
      expect(results.filter((r) => r.status === 200).length).toBeGreaterThan(0)
      for (const r of throttled) expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      // Another credential has its own budget.
      const basic = { authorization: `Basic ${Buffer.from('sim-user:sim-password').toString('base64')}`, accept: 'application/json' }
      expect((await call(limited, { ...lookup, headers: basic })).status).toBe(200)
    } finally {
      await limited.close()
    }
  })
})
