import { describe, expect, it } from 'vitest'
import { type Handler, startServer, json, client, rejection } from './__fixtures__/http-test-server.ts'
import { HttpConfigError, HttpResponseFormatError } from './errors.ts'
import { HttpClient } from './http-client.ts'
import { redactUrl } from './query-string.ts'

describe('HttpClient basics', () => {
  it('sends Accept: application/json, no Accept-Encoding, percent-encoded query, and parses JSON', async () => {
    const srv = await startServer(json(200, { ok: true }))
    const http = client({ baseUrl: `${srv.url}/api/` })
    const res = await http.request({
      operation: 'test.get',
      method: 'GET',
      path: '/v5/shops/findByCardTransaction',
      query: { description: 'Kavárna U Zlatého', mcc: null, terminalId: undefined, city: '' },
    })
    expect(res.status).toBe(200)
    expect(res.attempts).toBe(1)
    expect(res.json()).toEqual({ ok: true })
    const [req] = srv.seen
    expect(req!.url).toBe(
      '/api/v5/shops/findByCardTransaction?description=Kav%C3%A1rna%20U%20Zlat%C3%A9ho&mcc=&city=',
    )
    expect(req!.headers.accept).toBe('application/json')
    expect(req!.headers['accept-encoding']).toBeUndefined()
  })

  it('sends JSON and form bodies uncompressed with their content type', async () => {
    const srv = await startServer(json(200, {}))
    const http = client({ baseUrl: srv.url })
    await http.request({ operation: 'test.json', method: 'POST', path: '/j', json: { a: '', b: null } })
    await http.request({
      operation: 'test.form',
      method: 'POST',
      path: '/f',
      form: { grant_type: 'client_credentials', client_id: 'a b' },
    })
    expect(srv.seen[0]!.headers['content-type']).toBe('application/json')
    expect(srv.seen[0]!.headers['content-encoding']).toBeUndefined()
    expect(JSON.parse(srv.seen[0]!.body)).toEqual({ a: '', b: null })
    expect(srv.seen[1]!.headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(srv.seen[1]!.body).toBe('grant_type=client_credentials&client_id=a+b')
  })

  it('answers a non-2xx status the request accepts as a response, once, and throws the ones it does not', async () => {
    const srv = await startServer(json(404, { code: 'SHOP_NOT_FOUND' }))
    const http = client({ baseUrl: srv.url, retry: { retries: 2, retryStatuses: [404] } })
    const accept = (status: number, text: string) => status === 404 && text.includes('SHOP_NOT_FOUND')
    const res = await http.request({ operation: 'test.lookup', method: 'GET', path: '/find', accept })
    expect(res.status).toBe(404)
    expect(res.json()).toEqual({ code: 'SHOP_NOT_FOUND' })
    // Accepted: not retried although the policy retries 404.
    expect(srv.seen).toHaveLength(1)
    await expect(
      http.request({ operation: 'test.lookup', method: 'GET', path: '/find', accept: (status) => status === 400 }),
    ).rejects.toMatchObject({ code: 'HTTP_STATUS', status: 404 })
  })

  it('refuses plain http to a non-loopback host at construction', () => {
    expect(
      () => new HttpClient({ baseUrl: 'http://api.example.com', baseUrlName: 'ENRICHMENT_API_URL' }),
    ).toThrow(HttpConfigError)
    expect(
      () => new HttpClient({ baseUrl: 'http://api.example.com', baseUrlName: 'ENRICHMENT_API_URL' }),
    ).toThrow(/^ENRICHMENT_API_URL must be an https:\/\/ URL/)
  })

  it('checks absolute request URLs against the transport policy too', async () => {
    const http = client({ baseUrl: 'http://127.0.0.1:1' })
    await expect(
      http.request({ operation: 'x', method: 'GET', path: 'http://10.0.0.1/token' }),
    ).rejects.toThrow(/plain http is allowed only for loopback/)
  })

  it('rejects a non-JSON success body with HttpResponseFormatError on json()', async () => {
    const srv = await startServer((_req, res) => res.end('<html>gateway</html>'))
    const res = await client({ baseUrl: srv.url }).request({
      operation: 'test.html',
      method: 'GET',
      path: '/',
    })
    expect(() => res.json()).toThrow(HttpResponseFormatError)
    expect(() => res.json()).toThrow(
      /test\.html: GET http:\/\/127\.0\.0\.1:\d+\/ returned 200 with an unusable body: body is not valid JSON/,
    )
  })

  it('refuses success bodies above maxResponseBytes', async () => {
    const srv = await startServer((_req, res) => res.end('x'.repeat(10_000)))
    const err = await rejection(
      client({ baseUrl: srv.url, maxResponseBytes: 1_000 }).request({
        operation: 'big',
        method: 'GET',
        path: '/',
      }),
    )
    expect(err).toBeInstanceOf(HttpResponseFormatError)
    expect(err.message).toMatch(/exceeds 1000 bytes/)
  })

  it('answers a HEAD whose Content-Length exceeds maxResponseBytes (a HEAD answer has no body)', async () => {
    const srv = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '50000' })
      res.end()
    })
    const res = await client({ baseUrl: srv.url, maxResponseBytes: 1_000 }).request({
      operation: 'head',
      method: 'HEAD',
      path: '/',
    })
    expect(res.status).toBe(200)
    expect(res.headers['content-length']).toBe('50000')
    expect(res.text).toBe('')
  })

  it('reads chunked bodies (no Content-Length) whole, and refuses them above maxResponseBytes', async () => {
    const chunked =
      (parts: string[]): Handler =>
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' })
        for (const part of parts) res.write(part)
        res.end()
      }
    const srv = await startServer(
      chunked(['{"name":', '"Kavárna"', '}']),
      chunked(['x'.repeat(600), 'y'.repeat(600)]),
    )
    const http = client({ baseUrl: srv.url, maxResponseBytes: 1_000 })
    const res = await http.request({ operation: 'chunked', method: 'GET', path: '/' })
    expect(res.headers['content-length']).toBeUndefined()
    expect(res.json()).toEqual({ name: 'Kavárna' })
    const err = await rejection(http.request({ operation: 'chunked', method: 'GET', path: '/' }))
    expect(err).toBeInstanceOf(HttpResponseFormatError)
    expect(err.message).toMatch(/exceeds 1000 bytes/)
  })
})

describe('HttpClient request targets', () => {
  it('sends every path and query exactly as resolveUrl builds them, and reports the same redacted URL', async () => {
    const srv = await startServer(json(200, {}))
    const reported: string[] = []
    const c = client({ baseUrl: `${srv.url}/base/`, hooks: { onRequest: (i) => reported.push(i.url) } })
    const paths = [
      '/v5/shops/findByCardTransaction',
      '/v5/shops/538Vq%2Fx%40gb%20y',
      "/a/b!$&'()*+,;=:@-._~/",
      '/a b',
      '/x/../y',
      '/x/./y',
      '/x/%2e%2E/y',
      '/é',
      '/a//b',
      '/',
    ]
    const queries = [undefined, {}, { a: '1', 'b c': null, d: undefined, 'é&': "x y!'" }]
    for (const path of paths) {
      for (const query of queries) {
        const expected = c.resolveUrl(path, query)
        await c.request({ operation: 'o', method: 'GET', path, ...(query === undefined ? {} : { query }) })
        expect(srv.seen.at(-1)!.url, `${path} ${JSON.stringify(query)}`).toBe(
          `${expected.pathname}${expected.search}`,
        )
        expect(reported.at(-1), `${path} ${JSON.stringify(query)}`).toBe(redactUrl(expected))
      }
    }
  })
})
