/**
 * `--contract-drift` (issue 33): the simulator answers in the shapes the
 * interface description leaves open, and the enrichment client reads them.
 */
import { createEnrichmentClient } from '@tep/enrichment-client'
import { startEnrichmentSim, type DriftOverrides, type EnrichmentSim } from '@tep/enrichment-sim'
import type { ContractDrift } from '@tep/observability'
import { afterEach, describe, expect, it } from 'vitest'
import { admin, bearer, call, samples } from './sim-test-kit.ts'

const sims: EnrichmentSim[] = []
afterEach(async () => {
  for (const sim of sims.splice(0)) await sim.close()
})

async function drifting(overrides: DriftOverrides): Promise<EnrichmentSim> {
  const sim = await startEnrichmentSim({ seed: 3, shops: 300, merchants: 30, contractDrift: { seed: 1, overrides } })
  sims.push(sim)
  return sim
}

function tokenRequest(sim: EnrichmentSim) {
  return call(sim, {
    method: 'POST',
    path: '/auth/protocol/openid-connect/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&client_id=sim-client&client_secret=sim-secret',
  })
}

describe('the enrichment simulator with --contract-drift', () => {
  it('serves the feed in other JSON types with unknown fields, on the path with a trailing slash too', async () => {
    const sim = await drifting({ currentTime: 'epoch-number', hasMore: 'string', lastId: 'string', batchType: 'number', batchIds: 'numeric-strings', unknownFields: 'added', level: 'accepted' })
    await admin(sim, 'POST', '/__admin/mutations', { kind: 'random', count: 3 })
    const access = ((await tokenRequest(sim)).body as { access_token: string }).access_token
    const page = await call(sim, { path: '/v5/invalidations/', query: { fromId: '0', pageSize: '2', level: 'shop,merchant,handle' }, headers: bearer(access) })
    expect(page.status).toBe(200)
    const body = page.body as { meta: unknown; data: { currentTime: unknown; batches: { type: unknown; ids: unknown[] }[] }; paging: { lastId: unknown; hasMore: unknown; cursor: unknown } }
    expect(typeof body.data.currentTime).toBe('number')
    expect(typeof body.data.batches[0]!.type).toBe('number')
    expect(typeof body.data.batches[0]!.ids[0]).toBe('string')
    expect(body.paging).toMatchObject({ lastId: '2', hasMore: 'true' })
    expect(body.meta).toBeDefined()
    expect(sim.driftDrawn!()).toEqual(expect.arrayContaining(['currentTime=epoch-number', 'hasMore=string']))

    const drifts: ContractDrift[] = []
    const client = createEnrichmentClient({ baseUrl: sim.url, credentials: { type: 'oauth', clientId: 'sim-client', clientSecret: 'sim-secret' }, onContractDrift: (d) => drifts.push(d) })
    try {
      const read = await client.getInvalidations({ fromId: 0, pageSize: 2 })
      expect(read.batches.flatMap((b) => b.ids)).toEqual([1, 2])
      expect(read.paging).toMatchObject({ lastId: 2, hasMore: true })
      expect(drifts.map((d) => `${d.field} ${d.kind}`)).toEqual(expect.arrayContaining(['data.currentTime type', 'paging.hasMore type', 'body unknown-field']))
    } finally {
      await client.close()
    }
  })

  it('refuses level with a 400 and answers item/range 404, as drawn once for the process', async () => {
    const sim = await drifting({ level: 'refused-named', itemRange: 'not-found' })
    const access = ((await tokenRequest(sim)).body as { access_token: string }).access_token
    const refused = await call(sim, { path: '/v5/invalidations', query: { fromId: '0', level: 'shop' }, headers: bearer(access) })
    expect(refused).toMatchObject({ status: 400, body: { error: { parameter: 'level' } } })
    expect((await call(sim, { path: '/v5/invalidations', query: { fromId: '0' }, headers: bearer(access) })).status).toBe(200)
    const range = await call(sim, { path: '/v5/invalidations/item/range', query: { from: new Date().toISOString() }, headers: bearer(access) })
    expect(range.status).toBe(404)
  })

  it('answers the token request without expires_in and token_type, with extra fields, and entity reads with unknown fields', async () => {
    const sim = await drifting({ tokenExpiresIn: 'absent', tokenType: 'absent', tokenExtras: 'added', entity: 'unknown-fields' })
    const answer = (await tokenRequest(sim)).body as Record<string, unknown>
    expect(answer).not.toHaveProperty('expires_in')
    expect(answer).not.toHaveProperty('token_type')
    expect(answer).toHaveProperty('refresh_expires_in')
    const [sample] = await samples(sim, { count: 1, kind: 'card', outcome: 'found' })
    const client = createEnrichmentClient({ baseUrl: sim.url, credentials: { type: 'oauth', clientId: 'sim-client', clientSecret: 'sim-secret' } })
    try {
      const shop = await client.getShop(sample!.expected.shopUid!)
      expect(shop.uid).toBe(sample!.expected.shopUid)
      expect(shop).toHaveProperty('_links')
    } finally {
      await client.close()
    }
  })
})
