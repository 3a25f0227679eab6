import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { HttpClock } from '@tep/http'
import { afterEach, describe, expect, it } from 'vitest'
import type { EnrichmentClientOptions } from './client-options.ts'
import { EnrichmentClient } from './enrichment-client.ts'
import {
  EnrichmentAbortedError,
  EnrichmentAuthError,
  EnrichmentBadRequestError,
  EnrichmentInputError,
  EnrichmentInvalidResponseError,
  EnrichmentNotFoundError,
  EnrichmentUnauthorizedError,
} from './errors.ts'

/**
 * A scripted stand-in for the API, for behaviour the simulator cannot be made to
 * show (malformed answers, wrappers). The full behaviour against the simulator is
 * in test/enrichment-client/.
 */
interface Seen {
  method: string
  path: string
  query: URLSearchParams
  headers: IncomingMessage['headers']
  body: string
}

type Route = (seen: Seen, res: ServerResponse) => void

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(body === undefined ? '' : JSON.stringify(body))
}

async function fakeApi(routes: Record<string, Route>): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x')
      const entry = {
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      }
      seen.push(entry)
      const route = routes[`${entry.method} ${entry.path}`]
      if (route === undefined)
        send(res, 404, { error: { code: 'ROUTE_NOT_FOUND', message: 'no such route' } })
      else route(entry, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

const instantClock: HttpClock = { now: () => Date.now(), sleep: async () => {} }

function client(url: string, options: Partial<EnrichmentClientOptions> = {}): EnrichmentClient {
  const c = new EnrichmentClient({
    baseUrl: url,
    credentials: { type: 'oauth', clientId: 'pipeline', clientSecret: 'top-secret-value' },
    clock: instantClock,
    ...options,
  })
  cleanups.push(() => c.close())
  return c
}

let tokenCounter = 0
const tokenRoute: Route = (_seen, res) =>
  send(res, 200, { access_token: `tok-${++tokenCounter}`, token_type: 'Bearer', expires_in: 300 })

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (err) {
    return err as Error
  }
  throw new Error('expected a rejection')
}

describe('EnrichmentClient auth', () => {
  it('gets a token with the client-credentials form and sends it as Bearer with Accept: application/json', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'GET /v5/shops/findByCardTransaction': (_s, res) =>
        send(res, 200, { result: 'found', handle: 'h1', shop: { uid: 's1' } }),
    })
    const result = await client(api.url).findByCardTransaction({ merchantId: 'M1' })
    expect(result).toEqual({ status: 'found', handle: 'h1', shopUid: 's1' })
    const [token, lookup] = api.seen
    expect(token!.headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(Object.fromEntries(new URLSearchParams(token!.body))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'pipeline',
      client_secret: 'top-secret-value',
    })
    expect(lookup!.headers.authorization).toMatch(/^Bearer tok-\d+$/)
    expect(lookup!.headers.accept).toBe('application/json')
    expect(lookup!.headers['accept-encoding']).toBeUndefined()
  })

  it('renews the token once after a 401 and repeats the call', async () => {
    let lookups = 0
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'GET /v5/merchants/m1': (_s, res) =>
        ++lookups === 1
          ? send(res, 401, { error: { code: 'TOKEN_REVOKED', message: 'revoked' } })
          : send(res, 200, { uid: 'm1', name: 'Albert' }),
    })
    const merchant = await client(api.url).getMerchant('m1')
    expect(merchant).toEqual({ uid: 'm1', name: 'Albert' })
    const auths = api.seen.filter((s) => s.path === '/v5/merchants/m1').map((s) => s.headers.authorization)
    expect(auths).toHaveLength(2)
    expect(auths[0]).not.toBe(auths[1])
    expect(api.seen.filter((s) => s.path.endsWith('/token'))).toHaveLength(2)
  })

  it('gives up with EnrichmentUnauthorizedError when the fresh token is refused too', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'GET /v5/merchants/m1': (_s, res) =>
        send(res, 401, { error: { code: 'INVALID_TOKEN', message: 'bad signature' } }),
    })
    const err = await rejection(client(api.url).getMerchant('m1'))
    expect(err).toBeInstanceOf(EnrichmentUnauthorizedError)
    expect(err).toMatchObject({
      code: 'ENRICHMENT_UNAUTHORIZED',
      retriable: false,
      apiError: { code: 'INVALID_TOKEN' },
    })
    expect(err.message).toMatch(/refused again with a freshly issued token \(a retry will not help\)$/)
    expect(api.seen.filter((s) => s.path === '/v5/merchants/m1')).toHaveLength(2)
  })

  it('reports refused client credentials as EnrichmentAuthError without the secret', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': (_s, res) =>
        send(res, 401, { error: 'invalid_client', error_description: 'unknown client' }),
    })
    const err = await rejection(client(api.url).getShop('s1'))
    expect(err).toBeInstanceOf(EnrichmentAuthError)
    expect(err).toMatchObject({
      code: 'ENRICHMENT_AUTH_FAILED',
      retriable: false,
      oauthError: 'invalid_client',
      status: 401,
    })
    expect(err.message).toMatch(
      /refused client "pipeline" with 401 invalid_client: unknown client; check ENRICHMENT_CLIENT_ID/,
    )
    expect(JSON.stringify({ m: err.message, d: (err as EnrichmentAuthError).toJSON() })).not.toContain(
      'top-secret-value',
    )
  })

  it('uses a configured token URL and HTTP Basic when asked', async () => {
    const api = await fakeApi({
      'POST /realms/x/token': tokenRoute,
      'GET /v5/shops/s1': (_s, res) => send(res, 200, { uid: 's1' }),
    })
    await client(api.url, { tokenUrl: `${api.url}/realms/x/token` }).getShop('s1')
    expect(api.seen[0]!.path).toBe('/realms/x/token')

    await client(api.url, { credentials: { type: 'basic', username: 'ops', password: 'pw' } }).getShop('s1')
    expect(api.seen.at(-1)!.headers.authorization).toBe(`Basic ${Buffer.from('ops:pw').toString('base64')}`)
  })

  it('refuses plain http to a remote host and empty credentials at construction', () => {
    expect(
      () =>
        new EnrichmentClient({
          baseUrl: 'http://enrichment.example.com',
          credentials: { type: 'basic', username: 'a', password: 'b' },
        }),
    ).toThrow(/^ENRICHMENT_API_URL must be an https:\/\/ URL/)
    expect(
      () =>
        new EnrichmentClient({
          baseUrl: 'https://enrichment.example.com',
          tokenUrl: 'http://auth.example.com/token',
          credentials: { type: 'oauth', clientId: 'a', clientSecret: 'b' },
        }),
    ).toThrow(/^ENRICHMENT_TOKEN_URL must be an https:\/\/ URL/)
    expect(
      () =>
        new EnrichmentClient({
          baseUrl: 'https://e.example.com',
          credentials: { type: 'oauth', clientId: 'a', clientSecret: '' },
        }),
    ).toThrow(/ENRICHMENT_CLIENT_SECRET must both be non-empty/)
  })
})

describe('EnrichmentClient abort', () => {
  it('stops waiting for a slow token when the caller aborts', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': () => {
        /* the token endpoint never answers */
      },
    })
    const controller = new AbortController()
    const pending = client(api.url).getShop('s1', { signal: controller.signal })
    controller.abort(new Error('shutting down'))
    const err = await rejection(pending)
    expect(err).toBeInstanceOf(EnrichmentAbortedError)
    expect(err).toMatchObject({
      code: 'ENRICHMENT_ABORTED',
      operation: 'enrichment.getShop',
      retriable: false,
    })
  })
})

describe('EnrichmentClient lookups', () => {
  it('treats a result without shop as not found, whatever result says', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'GET /v5/shops/findByCardTransaction': (_s, res) => send(res, 200, { result: 'found', handle: 'h9' }),
    })
    expect(await client(api.url).findByCardTransaction({ description: 'X' })).toEqual({
      status: 'notFound',
      handle: 'h9',
    })
  })

  it('treats an API 404 on a lookup as not found, but a missing route as an error', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'GET /v5/shops/findByBankTransfer/sepa': (_s, res) =>
        send(res, 404, { error: { code: 'SHOP_NOT_FOUND', message: 'none' } }),
    })
    const c = client(api.url)
    expect(await c.findByBankTransfer('sepa', { iban: 'DE89370400440532013000' })).toEqual({
      status: 'notFound',
      handle: undefined,
    })
    const wrongBase = client(`${api.url}/wrong`)
    const err = await rejection(wrongBase.findByCardTransaction({ merchantId: 'M' }))
    expect(err).toBeInstanceOf(EnrichmentNotFoundError)
    expect(err.message).toMatch(/ROUTE_NOT_FOUND/)
  })

  it('sends the batch envelope and maps results by position, including invalid entries', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'POST /v5/shops/findByCardTransactionBatch': (_s, res) =>
        send(res, 200, [
          { result: 'found', handle: 'h1', shop: { uid: 's1' } },
          { result: 'invalid', error: { code: 'INVALID_PARAMETER', message: 'bad mcc', parameter: 'mcc' } },
          { result: 'notFound', handle: 'h3' },
        ]),
    })
    const results = await client(api.url).findByCardTransactionBatch([
      { merchantId: 'A' },
      { mcc: 'abc', city: null },
      { terminalId: undefined, description: '' },
    ])
    expect(results).toEqual([
      { status: 'found', handle: 'h1', shopUid: 's1' },
      { status: 'invalid', error: { code: 'INVALID_PARAMETER', message: 'bad mcc', parameter: 'mcc' } },
      { status: 'notFound', handle: 'h3' },
    ])
    const sent = api.seen.find((s) => s.path.endsWith('Batch'))!
    expect(sent.headers['content-type']).toBe('application/json')
    expect(JSON.parse(sent.body)).toEqual({
      requests: [{ merchantId: 'A' }, { city: '', mcc: 'abc' }, { description: '' }],
    })
  })

  it('accepts a {data: [...]} wrapper, logging it once', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'POST /v5/shops/complete/findByCardTransactionBatch': (_s, res) =>
        send(res, 200, {
          data: [
            {
              result: 'found',
              handle: 'h1',
              shop: { uid: 's1', type: 'bricks' },
              merchant: { uid: 'm1', name: 'Albert' },
            },
          ],
        }),
    })
    const warnings: object[] = []
    const c = client(api.url, { logger: { warn: (o) => warnings.push(o), debug: () => {} } })
    const [first] = await c.completeFindByCardTransactionBatch([{ merchantId: 'A' }])
    await c.completeFindByCardTransactionBatch([{ merchantId: 'A' }])
    expect(first).toEqual({
      status: 'found',
      handle: 'h1',
      shopUid: 's1',
      shop: { uid: 's1', type: 'bricks' },
      merchant: { uid: 'm1', name: 'Albert' },
    })
    expect(warnings).toHaveLength(1)
  })

  it('a shop or merchant answer without uid is the entity asked for (rule 6), not a breach', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'GET /v5/shops/s1': (_s, res) => send(res, 200, { type: 'bricks' }),
      'GET /v5/merchants/m1': (_s, res) => send(res, 200, { name: 'Albert' }),
    })
    expect(await client(api.url).getShop('s1')).toEqual({ uid: 's1', type: 'bricks' })
    expect(await client(api.url).getMerchant('m1')).toEqual({ uid: 'm1', name: 'Albert' })
  })

  it('rejects a batch answer whose length differs from the request', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'POST /v5/shops/findByCardTransactionBatch': (_s, res) =>
        send(res, 200, [{ result: 'notFound', handle: 'h' }]),
    })
    const err = await rejection(
      client(api.url).findByCardTransactionBatch([{ merchantId: 'A' }, { merchantId: 'B' }]),
    )
    expect(err).toBeInstanceOf(EnrichmentInvalidResponseError)
    expect(err.message).toMatch(/holding 1 results for 2 request entries/)
  })

  it('checks batch size and full card numbers before sending anything', async () => {
    const api = await fakeApi({ 'POST /auth/protocol/openid-connect/token': tokenRoute })
    const c = client(api.url)
    await expect(c.findByCardTransactionBatch([])).rejects.toThrow(EnrichmentInputError)
    await expect(
      c.findByCardTransactionBatch(Array.from({ length: 501 }, () => ({ merchantId: 'A' }))),
    ).rejects.toThrow(/1 to 500 transactions, got 501/)
    await expect(c.findByCardTransaction({ cardBin: '4111111111111111' })).rejects.toThrow(
      /never the full PAN/,
    )
    expect(api.seen).toHaveLength(0)
  })

  it('percent-encodes path ids', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'GET /v5/merchants/538Vq%40gb': (_s, res) => send(res, 200, { uid: '538Vq@gb' }),
    })
    expect((await client(api.url).getMerchant('538Vq@gb')).uid).toBe('538Vq@gb')
  })

  it('maps a 400 to a record-scoped EnrichmentBadRequestError', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'GET /v5/shops/findByCardTransaction': (_s, res) =>
        send(res, 400, { error: { code: 'INVALID_PARAMETER', message: 'bad', parameter: 'mcc' } }),
    })
    const err = await rejection(client(api.url).findByCardTransaction({ mcc: 'x' }))
    expect(err).toBeInstanceOf(EnrichmentBadRequestError)
    expect(err).toMatchObject({ recordScoped: true, retriable: false, apiError: { parameter: 'mcc' } })
  })
})

describe('EnrichmentClient invalidations', () => {
  it('follows paging.lastId until hasMore is false', async () => {
    const pages: Record<string, unknown> = {
      '0': {
        data: {
          currentTime: 't',
          batches: [{ level: 'shop', type: 'update', ids: [1, 2], keys: ['s1', 's2'] }],
        },
        paging: { lastId: 2, hasMore: true },
      },
      '2': {
        data: { currentTime: 't', batches: [{ level: 'merchant', type: 'delete', ids: [5], keys: ['m5'] }] },
        paging: { lastId: 5, hasMore: true },
      },
      '5': { data: { currentTime: 't', batches: [] }, paging: { lastId: 9, hasMore: false } },
    }
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'GET /v5/invalidations': (s, res) => send(res, 200, pages[s.query.get('fromId')!]),
    })
    const seenPages = []
    for await (const page of client(api.url).iterateInvalidations({
      fromId: 0,
      level: ['shop', 'merchant'],
      pageSize: 2,
    }))
      seenPages.push(page)
    expect(seenPages.map((p) => p.paging.lastId)).toEqual([2, 5, 9])
    expect(seenPages[1]!.batches).toEqual([{ level: 'merchant', type: 'delete', ids: [5], keys: ['m5'] }])
    const queries = api.seen
      .filter((s) => s.path === '/v5/invalidations')
      .map((s) => Object.fromEntries(s.query))
    expect(queries).toEqual([
      { fromId: '0', level: 'shop,merchant', pageSize: '2' },
      { fromId: '2', level: 'shop,merchant', pageSize: '2' },
      { fromId: '5', level: 'shop,merchant', pageSize: '2' },
    ])
  })

  it('stops instead of looping when the cursor does not advance', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'GET /v5/invalidations': (_s, res) =>
        send(res, 200, { data: { batches: [] }, paging: { lastId: 3, hasMore: true } }),
    })
    const iterate = async () => {
      for await (const _page of client(api.url).iterateInvalidations({ fromId: 3 })) {
        /* drain */
      }
    }
    await expect(iterate()).rejects.toThrow(/does not advance past fromId 3/)
  })

  it('derives the cursor when paging lacks lastId and hasMore', async () => {
    const api = await fakeApi({
      'POST /auth/protocol/openid-connect/token': tokenRoute,
      'GET /v5/invalidations': (_s, res) =>
        send(res, 200, { data: { batches: [{ level: 'shop', ids: [7, 8] }] } }),
    })
    const page = await client(api.url).getInvalidations({ fromId: 6, pageSize: 2 })
    expect(page.paging).toMatchObject({ lastId: 8, hasMore: true })
  })
})
