import type { EnrichmentClient } from '@tep/enrichment-client'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  cardInput,
  clearFaults,
  newClient,
  recordingClock,
  resetStats,
  samples,
  setFaults,
  startSim,
  stats,
  type SampleFound,
  type SimSample,
} from './sim-harness.ts'

let sim: EnrichmentSim
let found: SimSample[]
const clients: EnrichmentClient[] = []

function track(client: EnrichmentClient): EnrichmentClient {
  clients.push(client)
  return client
}

beforeAll(async () => {
  sim = await startSim()
  found = await samples(sim, { count: 24, kind: 'card', outcome: 'found', seed: 41 })
})

beforeEach(async () => {
  await clearFaults(sim)
})

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()))
  await clearFaults(sim)
})

afterAll(async () => {
  await sim?.close()
})

describe('Retry-After', () => {
  it('waits at least what a 429 asks before trying again, then succeeds', async () => {
    const clock = recordingClock()
    const client = track(newClient(sim, { clock }))
    await client.getShop((found[0]!.expected as SampleFound).shopUid) // token first
    await setFaults(sim, { throttleRate: 1, retryAfterSeconds: 1, count: 1, pathPrefix: '/v5' })
    await resetStats(sim)

    const shop = await client.getShop((found[0]!.expected as SampleFound).shopUid)
    expect(shop.uid).toBe((found[0]!.expected as SampleFound).shopUid)
    expect(clock.sleeps).toHaveLength(1)
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(1_000)
    const s = await stats(sim)
    expect(s.requests.byStatus).toEqual({ '200': 1, '429': 1 })
  })
})

describe('rate and concurrency limits per credential', () => {
  it('never has more than maxConcurrent requests in flight at the simulator, shared by two clients of one credential', async () => {
    // Latency makes requests overlap, so a missing limit would show.
    await setFaults(sim, { latencyMs: 30, pathPrefix: '/v5' })
    const first = track(newClient(sim, { limits: { maxConcurrent: 3 } }))
    const second = track(newClient(sim, { limits: first.limiter }))
    await Promise.all([
      first.getShop((found[0]!.expected as SampleFound).shopUid),
      second.getShop((found[0]!.expected as SampleFound).shopUid),
    ])
    await resetStats(sim)

    await Promise.all(found.map((s, i) => (i % 2 === 0 ? first : second).findByCardTransaction(cardInput(s))))
    const s = await stats(sim)
    expect(s.requests.byOperation.findByCardTransaction).toBe(found.length)
    expect(s.concurrency.max).toBe(3)
  })

  it('a client limited below the server rate is never throttled; an unlimited one is, and recovers via Retry-After', async () => {
    const limited = await startSim({ rateLimitPerSecond: 5 })
    try {
      const slow = track(newClient(limited, { limits: { minTimeMs: 230 } }))
      await slow.getShop((found[0]!.expected as SampleFound).shopUid)
      await Promise.all(found.slice(0, 10).map((s) => slow.findByCardTransaction(cardInput(s))))
      expect((await stats(limited)).requests.byStatus['429']).toBeUndefined()

      await resetStats(limited)
      const fast = track(newClient(limited, { retry: { retries: 8 } }))
      const results = await Promise.all(
        found.slice(0, 12).map((s) => fast.findByCardTransaction(cardInput(s))),
      )
      expect(results.every((r) => r.status === 'found')).toBe(true)
      const s = await stats(limited)
      expect(s.requests.byStatus['429']).toBeGreaterThan(0)
      expect(s.requests.byStatus['200']).toBe(12 + 1) // the lookups and this client's token request
    } finally {
      await limited.close()
    }
  })
})
