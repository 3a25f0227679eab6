import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEnrichmentSim, type EnrichmentSim } from '../sim.ts'

/** A simulator without the lookups the description does not publish: 404 for them, the rest served as before. */
let sim: EnrichmentSim
let token: string

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: { error?: { code?: string } } }> {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, json: (await res.json()) as { error?: { code?: string } } }
}

beforeAll(async () => {
  sim = await startEnrichmentSim({ shops: 50, merchants: 5, withoutBatchAndComplete: true })
  const res = await fetch(sim.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&client_id=sim-client&client_secret=sim-secret',
  })
  token = ((await res.json()) as { access_token: string }).access_token
})

afterAll(async () => {
  await sim?.close()
})

describe('withoutBatchAndComplete', () => {
  it.each([
    ['POST', '/v5/shops/findByCardTransactionBatch', { requests: [{ terminalId: 'T1' }] }],
    ['POST', '/v5/shops/complete/findByCardTransactionBatch', { requests: [{ terminalId: 'T1' }] }],
    ['GET', '/v5/shops/complete/findByCardTransaction?terminalId=T1', undefined],
  ])('answers %s %s with 404 ROUTE_NOT_FOUND', async (method, path, body) => {
    const res = await call(method, path, body)
    expect(res.status).toBe(404)
    expect(res.json.error?.code).toBe('ROUTE_NOT_FOUND')
  })

  it('still serves the plain single lookup', async () => {
    const res = await call('GET', '/v5/shops/findByCardTransaction?terminalId=T1&street=N%C3%A1rodn%C3%AD%201&posEntryMode=051')
    expect(res.status).toBe(200)
  })
})
