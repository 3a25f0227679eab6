import { EnrichmentNetworkError } from '@tep/enrichment-client'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  cardInput,
  instantClock,
  newClient,
  oneSample,
  rejection,
  startSim,
  stats,
  type SampleFound,
  type SimSample,
} from './sim-harness.ts'

/**
 * The production transport: HTTPS with TLS 1.2 or newer and a verified server
 * certificate. The simulator serves a self-signed one; the client trusts it only
 * when told to.
 */

let sim: EnrichmentSim
let found: SimSample

beforeAll(async () => {
  sim = await startSim({ https: true })
  found = await oneSample(sim, { count: 1, kind: 'card', outcome: 'found', seed: 51 })
})

afterAll(async () => {
  await sim?.close()
})

describe('HTTPS', () => {
  it('gets a token and looks up over TLS when the simulator certificate is trusted', async () => {
    expect(sim.url).toMatch(/^https:\/\//)
    const client = newClient(sim, { tls: { ca: sim.ca! } })
    try {
      const result = await client.findByCardTransaction(cardInput(found))
      expect(result).toMatchObject({ status: 'found', shopUid: (found.expected as SampleFound).shopUid })
    } finally {
      await client.close()
    }
  })

  it('refuses an untrusted certificate without retrying, before any credential is sent', async () => {
    const before = await stats(sim)
    const clock = instantClock()
    const client = newClient(sim, { clock })
    try {
      const err = await rejection(client.getShop((found.expected as SampleFound).shopUid))
      expect(err).toBeInstanceOf(EnrichmentNetworkError)
      expect(err).toMatchObject({ operation: 'enrichment.token', retriable: false })
      expect(err.message).toMatch(/TLS or configuration problem/)
      expect(clock.sleeps).toEqual([])
    } finally {
      await client.close()
    }
    expect((await stats(sim)).tokenRequests).toBe(before.tokenRequests)
  })
})
