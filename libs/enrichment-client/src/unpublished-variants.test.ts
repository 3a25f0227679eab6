import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ContractDrift } from '@tep/observability'
import { afterEach, describe, expect, it } from 'vitest'
import { EnrichmentClient } from './enrichment-client.ts'
import { EnrichmentNotFoundError } from './errors.ts'

/**
 * The client against a stand-in that answers what the description allows:
 * a 404 for the `complete` variant (which the description does not publish),
 * ids as JSON numbers. The client reports, the caller decides.
 */
const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!()
})

async function standIn(answers: Record<string, [number, unknown]>): Promise<string> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    const [status, body] = answers[`${req.method} ${path}`] ?? [404, { error: { code: 'NOT_FOUND', message: 'nothing here' } }]
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

function client(url: string, drifts: ContractDrift[] = []): EnrichmentClient {
  const c = new EnrichmentClient({
    baseUrl: url,
    credentials: { type: 'basic', username: 'u', password: 'p' },
    onContractDrift: (d) => drifts.push(d),
  })
  closers.push(() => c.close())
  return c
}

describe('unpublished lookup variants', () => {
  it('a 404 from the complete variant is thrown, not read as "no shop" (it may mean no such operation)', async () => {
    const url = await standIn({})
    const err = await client(url).completeFindByCardTransaction({ merchantId: 'M1' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(EnrichmentNotFoundError)
    expect((err as EnrichmentNotFoundError).status).toBe(404)
  })

  it('the plain lookup keeps its meaning: a 404 with the API error body is not found', async () => {
    const url = await standIn({})
    expect(await client(url).findByCardTransaction({ merchantId: 'M1' })).toEqual({ status: 'notFound', handle: undefined })
  })
})

describe('onContractDrift', () => {
  it('is told of every tolerated deviation of a lookup and an entity answer', async () => {
    const url = await standIn({
      'GET /v5/shops/findByCardTransaction': [200, { handle: 'h1', shop: { uid: 4711 } }],
      'GET /v5/shops/4711': [200, { uid: 4711, merchantUid: 12 }],
    })
    const drifts: ContractDrift[] = []
    const c = client(url, drifts)
    const found = await c.findByCardTransaction({ merchantId: 'M1' })
    expect(found).toEqual({ status: 'found', handle: 'h1', shopUid: '4711' })
    expect(await c.getShop('4711')).toMatchObject({ uid: '4711', merchantUid: '12' })
    expect(drifts.map((d) => [d.api, d.operation, d.field, d.kind])).toEqual([
      ['enrichment', 'findByCardTransaction', 'shop.uid', 'type'],
      ['enrichment', 'getShop', 'uid', 'type'],
      ['enrichment', 'getShop', 'merchantUid', 'type'],
    ])
  })
})
