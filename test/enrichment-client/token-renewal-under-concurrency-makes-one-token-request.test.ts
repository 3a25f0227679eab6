import type { EnrichmentClient } from '@tep/enrichment-client'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  admin,
  advanceSimClock,
  cardInput,
  movableClock,
  newClient,
  resetStats,
  samples,
  startSim,
  stats,
  type MovableClock,
  type SampleFound,
  type SimSample,
} from './sim-harness.ts'

/**
 * Tokens live 300 s in simulator time. The tests move the simulator's clock (and,
 * where the client should notice, the client's clock by the same amount) instead
 * of waiting, then fire N concurrent calls: exactly one token request may result.
 */

const N = 40

let sim: EnrichmentSim
let found: SimSample[]
let client: EnrichmentClient
let clock: MovableClock

beforeAll(async () => {
  sim = await startSim()
  found = await samples(sim, { count: N, kind: 'card', outcome: 'found', seed: 31 })
})

beforeEach(async () => {
  await admin(sim, 'POST', '/__admin/reset')
  clock = movableClock()
  client = newClient(sim, { clock })
  // Warm up: the first call fetches the first token.
  await client.getShop((found[0]!.expected as SampleFound).shopUid)
  await resetStats(sim)
})

afterEach(async () => {
  await client?.close()
})

afterAll(async () => {
  await sim?.close()
})

async function lookUpAllConcurrently(): Promise<void> {
  const results = await Promise.all(found.map((s) => client.findByCardTransaction(cardInput(s))))
  results.forEach((r, i) =>
    expect(r).toMatchObject({ status: 'found', shopUid: (found[i]!.expected as SampleFound).shopUid }),
  )
}

describe('token renewal under concurrency', () => {
  it('keeps using the cached token while it is fresh', async () => {
    await advanceSimClock(sim, 200)
    clock.advance(200_000)
    await lookUpAllConcurrently()
    const s = await stats(sim)
    expect(s.tokenRequests).toBe(0)
    expect(s.requests.byStatus['401']).toBeUndefined()
  })

  it('renews ahead of expiry (past 80 % of the lifetime) with one token request for N concurrent calls, before any 401', async () => {
    await advanceSimClock(sim, 250)
    clock.advance(250_000)
    await lookUpAllConcurrently()
    const s = await stats(sim)
    expect(s.tokenRequests).toBe(1)
    expect(s.requests.byStatus['401']).toBeUndefined()
    expect(s.requests.byOperation.findByCardTransaction).toBe(N)
  })

  it('after the token expired, N concurrent calls cause one token request', async () => {
    await advanceSimClock(sim, 301)
    clock.advance(301_000)
    await lookUpAllConcurrently()
    const s = await stats(sim)
    expect(s.tokenRequests).toBe(1)
    expect(s.requests.byStatus['401']).toBeUndefined()
  })

  it('when the server rejects a token the client still trusts, N concurrent 401s cause one renewal and every call succeeds', async () => {
    // Only the simulator's clock moves: the client's cache still holds the token as fresh.
    await advanceSimClock(sim, 301)
    await lookUpAllConcurrently()
    const s = await stats(sim)
    expect(s.tokenRequests).toBe(1)
    expect(s.requests.byStatus['401']).toBe(N)
    expect(s.requests.byOperation.findByCardTransaction).toBe(2 * N)

    // The renewed token is cached: the next round needs none.
    await resetStats(sim)
    await lookUpAllConcurrently()
    expect((await stats(sim)).tokenRequests).toBe(0)
  })
})
