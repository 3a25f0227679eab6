import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, request } from 'undici'
import { startEnrichmentSim } from '@tep/enrichment-sim'
import type { EnrichmentSim } from '@tep/enrichment-sim'

let sim: EnrichmentSim

beforeAll(async () => {
  sim = await startEnrichmentSim({ seed: 41, shops: 500, merchants: 50, https: true })
})

afterAll(async () => {
  await sim?.close()
})

describe('--https', () => {
  it('serves the API over TLS with a self-signed certificate the caller can trust', async () => {
    expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
    expect(sim.ca).toMatch(/BEGIN CERTIFICATE/)
    const agent = new Agent({ connect: { ca: sim.ca as string } })
    try {
      const res = await request(sim.tokenUrl, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&client_id=sim-client&client_secret=sim-secret',
      })
      expect(res.statusCode).toBe(200)
      expect(await res.body.json()).toMatchObject({ token_type: 'Bearer', expires_in: 300 })
    } finally {
      await agent.close()
    }
  })

  it('refuses TLS 1.1 and untrusted callers', async () => {
    const old = new Agent({ connect: { ca: sim.ca as string, maxVersion: 'TLSv1.1', minVersion: 'TLSv1' } })
    const untrusting = new Agent()
    try {
      await expect(request(`${sim.url}/__admin/health`, { dispatcher: old })).rejects.toThrow()
      await expect(request(`${sim.url}/__admin/health`, { dispatcher: untrusting })).rejects.toThrow(/self.signed|certificate/i)
    } finally {
      await old.close()
      await untrusting.close()
    }
  })
})
