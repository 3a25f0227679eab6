import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import {
  HttpAbortedError,
  HttpConfigError,
  HttpNetworkError,
  HttpResponseFormatError,
  HttpStatusError,
  HttpTimeoutError,
  HttpTlsError,
  ThrottledError,
} from './errors.ts'
import {
  HttpClient,
  type HttpClientOptions,
  type HttpClock,
  type ResponseInfo,
  type RetryInfo,
} from './http-client.ts'
import { redactUrl } from './query-string.ts'
import { createRequestLimiter } from './rate-limits.ts'

interface Seen {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen, index: number) => void

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  const { port } = server.address() as AddressInfo
  return `127.0.0.1:${port}`
}

/** A loopback server answering with `handlers[i]` for the i-th request (the last one repeats). */
async function startServer(...handlers: Handler[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      seen.push(entry)
      const index = seen.length - 1
      handlers[Math.min(index, handlers.length - 1)]!(req, res, entry, index)
    })
  })
  return { url: `http://${await listen(server)}`, seen }
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(JSON.stringify(body))
  }

/** Records the waits instead of sleeping, so retry tests need no real time. */
function fakeClock(nowMs = Date.parse('2026-01-01T00:00:00Z')): HttpClock & { sleeps: number[] } {
  const sleeps: number[] = []
  return {
    sleeps,
    now: () => nowMs,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted()
      sleeps.push(ms)
    },
  }
}

function client(options: HttpClientOptions): HttpClient {
  const c = new HttpClient(options)
  cleanups.push(() => c.close())
  return c
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (err) {
    return err as Error
  }
  throw new Error('expected the promise to reject')
}

/** A port with nothing listening: bind one, then close it. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

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

describe('HttpClient status errors', () => {
  it('does not retry a 400 and exposes status, body and a URL without query values', async () => {
    const srv = await startServer(json(400, { code: 'INVALID_PARAMETER', parameter: 'mcc' }))
    const clock = fakeClock()
    const err = await rejection(
      client({ baseUrl: srv.url, clock }).request({
        operation: 'test.lookup',
        method: 'GET',
        path: '/find',
        query: { cardBin: '411111', mcc: 'x' },
      }),
    )
    expect(err).toBeInstanceOf(HttpStatusError)
    const e = err as HttpStatusError
    expect(e).toMatchObject({
      status: 400,
      retriable: false,
      code: 'HTTP_STATUS',
      operation: 'test.lookup',
      method: 'GET',
      attempt: 1,
    })
    expect(e.url).toMatch(/\/find\?cardBin=\*&mcc=\*$/)
    expect(e.bodyJson()).toEqual({ code: 'INVALID_PARAMETER', parameter: 'mcc' })
    expect(e.message).not.toContain('411111')
    expect(JSON.stringify(e.toJSON())).not.toContain('411111')
    expect(srv.seen).toHaveLength(1)
    expect(clock.sleeps).toEqual([])
  })

  it('retries 503 with backoff and succeeds, reporting each retry to onRetry', async () => {
    const srv = await startServer(json(503, {}), json(502, {}), json(200, { fine: 1 }))
    const clock = fakeClock()
    const retries: RetryInfo[] = []
    const http = client({
      baseUrl: srv.url,
      clock,
      random: () => 0.5,
      retry: { initialDelayMs: 100, maxDelayMs: 1_000 },
      hooks: { onRetry: (i) => retries.push(i) },
    })
    const res = await http.request({ operation: 'test.flaky', method: 'GET', path: '/' })
    expect(res.json()).toEqual({ fine: 1 })
    expect(res.attempts).toBe(3)
    expect(clock.sleeps).toEqual([50, 100])
    expect(retries.map((r) => [r.attempt, r.delayMs, (r.error as HttpStatusError).status])).toEqual([
      [1, 50, 503],
      [2, 100, 502],
    ])
  })

  it('gives up after `retries` and throws the last error', async () => {
    const srv = await startServer(json(500, { e: 1 }))
    const clock = fakeClock()
    const err = await rejection(
      client({ baseUrl: srv.url, clock, retry: { retries: 2 } }).request({
        operation: 'o',
        method: 'GET',
        path: '/',
      }),
    )
    expect(err).toBeInstanceOf(HttpStatusError)
    expect(err).toMatchObject({ status: 500, retriable: true, attempt: 3 })
    expect(srv.seen).toHaveLength(3)
    expect(clock.sleeps).toHaveLength(2)
  })

  it('honours Retry-After in seconds on 429, waiting at least that long', async () => {
    const srv = await startServer(json(429, {}, { 'retry-after': '2' }), json(200, {}))
    const clock = fakeClock()
    const res = await client({ baseUrl: srv.url, clock, random: () => 0 }).request({
      operation: 'o',
      method: 'GET',
      path: '/',
    })
    expect(res.attempts).toBe(2)
    expect(clock.sleeps).toEqual([2_000])
  })

  it('honours Retry-After as an HTTP-date', async () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    const srv = await startServer(
      json(503, {}, { 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }),
      json(200, {}),
    )
    const clock = fakeClock(now)
    await client({ baseUrl: srv.url, clock, random: () => 0 }).request({
      operation: 'o',
      method: 'GET',
      path: '/',
    })
    expect(clock.sleeps).toEqual([3_000])
  })

  it('keeps the larger of backoff and Retry-After', async () => {
    const srv = await startServer(json(429, {}, { 'retry-after': '0' }), json(200, {}))
    const clock = fakeClock()
    await client({
      baseUrl: srv.url,
      clock,
      random: () => 0.999,
      retry: { initialDelayMs: 400, maxDelayMs: 400 },
    }).request({
      operation: 'o',
      method: 'GET',
      path: '/',
    })
    expect(clock.sleeps).toEqual([400])
  })

  it('throws ThrottledError without waiting when Retry-After exceeds maxRetryAfterMs', async () => {
    const srv = await startServer(json(429, { message: 'slow down' }, { 'retry-after': '120' }))
    const clock = fakeClock()
    const err = await rejection(
      client({ baseUrl: srv.url, clock, retry: { maxRetryAfterMs: 30_000 } }).request({
        operation: 'o',
        method: 'GET',
        path: '/',
      }),
    )
    expect(err).toBeInstanceOf(ThrottledError)
    expect(err).toMatchObject({ status: 429, retriable: true, retryAfterMs: 120_000, code: 'HTTP_THROTTLED' })
    expect(err.message).toMatch(/throttled \(429\), server asks to wait 120000 ms/)
    expect(srv.seen).toHaveLength(1)
    expect(clock.sleeps).toEqual([])
  })

  it('does not retry a non-idempotent POST on a 503, but does when the request is declared idempotent', async () => {
    const once = await startServer(json(503, {}), json(200, {}))
    const clock = fakeClock()
    const err = await rejection(
      client({ baseUrl: once.url, clock }).request({ operation: 'pay', method: 'POST', path: '/', json: {} }),
    )
    expect(err).toMatchObject({ status: 503, retriable: true })
    expect(once.seen).toHaveLength(1)

    const twice = await startServer(json(503, {}), json(200, {}))
    const res = await client({ baseUrl: twice.url, clock }).request({
      operation: 'batch',
      method: 'POST',
      path: '/',
      json: {},
      idempotent: true,
    })
    expect(res.attempts).toBe(2)
    expect(twice.seen).toHaveLength(2)
  })
})

describe('HttpClient credential-wide pause', () => {
  it('holds back new requests of the same credential after a 429 with Retry-After, not those of another', async () => {
    const srv = await startServer(json(429, {}, { 'retry-after': '3' }), json(200, {}))
    const shared = createRequestLimiter({ maxConcurrent: 4 })
    cleanups.push(() => shared.stop())
    const firstClock = fakeClock()
    await client({ baseUrl: srv.url, limiter: shared, clock: firstClock, random: () => 0 }).request({
      operation: 'a',
      method: 'GET',
      path: '/',
    })
    expect(firstClock.sleeps).toEqual([3_000])

    const sameCredential = fakeClock()
    await client({ baseUrl: srv.url, limiter: shared, clock: sameCredential }).request({
      operation: 'b',
      method: 'GET',
      path: '/',
    })
    expect(sameCredential.sleeps).toEqual([3_000])

    const otherCredential = fakeClock()
    await client({ baseUrl: srv.url, clock: otherCredential }).request({
      operation: 'c',
      method: 'GET',
      path: '/',
    })
    expect(otherCredential.sleeps).toEqual([])
  })

  it('caps the pause at maxRetryAfterMs and lets an abort end it', async () => {
    const srv = await startServer(json(429, {}, { 'retry-after': '600' }))
    const shared = createRequestLimiter()
    cleanups.push(() => shared.stop())
    const clock = fakeClock()
    await rejection(
      client({ baseUrl: srv.url, limiter: shared, clock, retry: { maxRetryAfterMs: 10_000 } }).request({
        operation: 'a',
        method: 'GET',
        path: '/',
      }),
    )
    expect(shared.resumeAt).toBe(clock.now() + 10_000)
    const err = await rejection(
      client({ baseUrl: srv.url, limiter: shared, clock }).request({
        operation: 'b',
        method: 'GET',
        path: '/',
        signal: AbortSignal.abort(),
      }),
    )
    expect(err).toBeInstanceOf(HttpAbortedError)
    expect(srv.seen).toHaveLength(1)
  })
})

describe('HttpClient network failures', () => {
  it('retries a non-idempotent POST when the connection is refused (the server never saw it)', async () => {
    const port = await closedPort()
    const clock = fakeClock()
    const retries: RetryInfo[] = []
    const err = await rejection(
      client({
        baseUrl: `http://127.0.0.1:${port}`,
        clock,
        retry: { retries: 2 },
        hooks: { onRetry: (r) => retries.push(r) },
      }).request({
        operation: 'token',
        method: 'POST',
        path: '/',
        form: { a: 'b' },
      }),
    )
    expect(err).toBeInstanceOf(HttpNetworkError)
    expect(err).toMatchObject({
      code: 'HTTP_NETWORK_ERROR',
      networkCode: 'ECONNREFUSED',
      beforeSend: true,
      retriable: true,
      attempt: 3,
    })
    expect(retries).toHaveLength(2)
  })

  it('does not retry a non-idempotent POST whose connection broke after sending; retries a GET', async () => {
    const reset: Handler = (req) => req.socket.destroy()
    const post = await startServer(reset)
    const clock = fakeClock()
    const err = await rejection(
      client({ baseUrl: post.url, clock }).request({
        operation: 'pay',
        method: 'POST',
        path: '/',
        json: { x: 1 },
      }),
    )
    expect(err).toBeInstanceOf(HttpNetworkError)
    expect(err).toMatchObject({ beforeSend: false, retriable: true })
    expect(post.seen).toHaveLength(1)

    const get = await startServer(reset, json(200, { ok: 1 }))
    const res = await client({ baseUrl: get.url, clock }).request({
      operation: 'read',
      method: 'GET',
      path: '/',
    })
    expect(res.attempts).toBe(2)
  })

  it('times out waiting for headers with HttpTimeoutError (retriable) and retries it', async () => {
    const srv = await startServer(() => {
      /* never answers */
    })
    const clock = fakeClock()
    const err = await rejection(
      client({ baseUrl: srv.url, clock, timeouts: { headersMs: 150 }, retry: { retries: 1 } }).request({
        operation: 'slow',
        method: 'GET',
        path: '/',
      }),
    )
    expect(err).toBeInstanceOf(HttpTimeoutError)
    expect(err).toMatchObject({
      code: 'HTTP_TIMEOUT',
      phase: 'headers',
      timeoutMs: 150,
      retriable: true,
      attempt: 2,
    })
    expect(err.message).toMatch(
      /^slow: GET http:\/\/127\.0\.0\.1:\d+\/ timed out waiting for the headers after 150 ms/,
    )
    expect(srv.seen).toHaveLength(2)
  })

  it('times out between body chunks', async () => {
    const srv = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"partial":')
    })
    const err = await rejection(
      client({ baseUrl: srv.url, timeouts: { bodyMs: 150 }, retry: { retries: 0 } }).request({
        operation: 'o',
        method: 'GET',
        path: '/',
      }),
    )
    expect(err).toBeInstanceOf(HttpTimeoutError)
    expect(err).toMatchObject({ phase: 'body' })
  })

  it('times out between body chunks of a body with Content-Length too', async () => {
    const srv = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
      res.write('{"partial":')
    })
    const err = await rejection(
      client({ baseUrl: srv.url, timeouts: { bodyMs: 150 }, retry: { retries: 0 } }).request({
        operation: 'o',
        method: 'GET',
        path: '/',
      }),
    )
    expect(err).toBeInstanceOf(HttpTimeoutError)
    expect(err).toMatchObject({ phase: 'body' })
  })

  it('reports a body with Content-Length cut short by the server as a retriable HttpNetworkError', async () => {
    const srv = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
      res.write('{"partial":', () => res.socket?.destroy())
    })
    const err = await rejection(
      client({ baseUrl: srv.url, retry: { retries: 0 } }).request({
        operation: 'o',
        method: 'GET',
        path: '/',
      }),
    )
    expect(err).toBeInstanceOf(HttpNetworkError)
    expect(err).toMatchObject({ code: 'HTTP_NETWORK_ERROR', retriable: true })
  })
})

describe('HttpClient abort', () => {
  it('rejects with HttpAbortedError when the signal fires mid-request, without retrying', async () => {
    const controller = new AbortController()
    const srv = await startServer(() => controller.abort(new Error('shutting down')))
    const err = await rejection(
      client({ baseUrl: srv.url }).request({
        operation: 'o',
        method: 'GET',
        path: '/',
        signal: controller.signal,
      }),
    )
    expect(err).toBeInstanceOf(HttpAbortedError)
    expect(err).toMatchObject({ code: 'HTTP_ABORTED', retriable: false })
    expect(srv.seen).toHaveLength(1)
  })

  it('stops during the retry wait', async () => {
    const controller = new AbortController()
    const srv = await startServer(json(503, {}))
    const clock: HttpClock = {
      now: () => Date.now(),
      sleep: async (_ms, signal) => {
        controller.abort()
        signal?.throwIfAborted()
      },
    }
    const err = await rejection(
      client({ baseUrl: srv.url, clock }).request({
        operation: 'o',
        method: 'GET',
        path: '/',
        signal: controller.signal,
      }),
    )
    expect(err).toBeInstanceOf(HttpAbortedError)
    expect(srv.seen).toHaveLength(1)
  })

  it('does not send a request whose signal is already aborted', async () => {
    const srv = await startServer(json(200, {}))
    const err = await rejection(
      client({ baseUrl: srv.url }).request({
        operation: 'o',
        method: 'GET',
        path: '/',
        signal: AbortSignal.abort(),
      }),
    )
    expect(err).toBeInstanceOf(HttpAbortedError)
    expect(srv.seen).toHaveLength(0)
  })
})

describe('HttpClient limits and hooks', () => {
  it('keeps concurrent requests at or below maxConcurrent for a shared limiter', async () => {
    let inFlight = 0
    let maxInFlight = 0
    const srv = await startServer((_req, res) => {
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      // Hold each answer briefly so that requests the limiter let through overlap.
      setTimeout(() => {
        inFlight--
        res.end('{}')
      }, 20)
    })
    const limiter = createRequestLimiter({ maxConcurrent: 2 })
    cleanups.push(() => limiter.stop())
    const a = client({ baseUrl: srv.url, limiter })
    const b = client({ baseUrl: srv.url, limiter })
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? a : b).request({ operation: 'o', method: 'GET', path: `/${i}` }),
      ),
    )
    expect(srv.seen).toHaveLength(10)
    expect(maxInFlight).toBe(2)
  })

  it('reports every attempt to onRequest/onResponse with status or error code', async () => {
    const srv = await startServer(json(503, {}), json(200, {}))
    const requests: number[] = []
    const responses: ResponseInfo[] = []
    await client({
      baseUrl: srv.url,
      clock: fakeClock(),
      hooks: {
        onRequest: (i) => requests.push(i.attempt),
        onResponse: (i) => responses.push(i),
      },
    }).request({ operation: 'enrichment.getShop', method: 'GET', path: '/v5/shops/x' })
    expect(requests).toEqual([1, 2])
    expect(responses.map((r) => [r.operation, r.attempt, r.status])).toEqual([
      ['enrichment.getShop', 1, 503],
      ['enrichment.getShop', 2, 200],
    ])
    expect(responses.every((r) => r.durationMs >= 0)).toBe(true)
  })

  it('survives a throwing hook', async () => {
    const srv = await startServer(json(200, {}))
    const warnings: object[] = []
    const res = await client({
      baseUrl: srv.url,
      hooks: {
        onRequest: () => {
          throw new Error('metrics broke')
        },
      },
      logger: { warn: (o) => warnings.push(o), debug: () => {} },
    }).request({ operation: 'o', method: 'GET', path: '/' })
    expect(res.status).toBe(200)
    expect(warnings).toHaveLength(1)
  })
})

describe('HttpClient TLS', () => {
  const fixtures = new URL('./__fixtures__/', import.meta.url)
  const cert = readFileSync(new URL('localhost-cert.pem', fixtures))
  const key = readFileSync(new URL('localhost-key.pem', fixtures))

  async function tlsServer(
    options: { maxVersion?: 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'; minVersion?: 'TLSv1' | 'TLSv1.2' } = {},
  ): Promise<string> {
    const server = createTlsServer({ cert, key, ...options }, (_req, res) => res.end('{"secure":true}'))
    server.on('tlsClientError', () => {})
    return `https://${await listen(server)}`
  }

  it('talks to an https server whose CA it trusts', async () => {
    const url = await tlsServer()
    const res = await client({ baseUrl: url, tls: { ca: cert } }).request({
      operation: 'o',
      method: 'GET',
      path: '/',
    })
    expect(res.json()).toEqual({ secure: true })
  })

  it('fails with a non-retriable HttpTlsError on an untrusted certificate', async () => {
    const url = await tlsServer()
    const clock = fakeClock()
    const err = await rejection(
      client({ baseUrl: url, clock }).request({ operation: 'o', method: 'GET', path: '/' }),
    )
    expect(err).toBeInstanceOf(HttpTlsError)
    expect(err).toMatchObject({ code: 'HTTP_TLS_FAILED', retriable: false })
    expect(clock.sleeps).toEqual([])
  })

  it('refuses a server that only speaks TLS 1.1', async () => {
    const url = await tlsServer({ minVersion: 'TLSv1', maxVersion: 'TLSv1.1' })
    const clock = fakeClock()
    const err = await rejection(
      client({ baseUrl: url, clock, tls: { ca: cert } }).request({
        operation: 'o',
        method: 'GET',
        path: '/',
      }),
    )
    expect(err).toBeInstanceOf(HttpTlsError)
    expect((err as HttpTlsError).networkCode).toMatch(/PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL/)
    expect(clock.sleeps).toEqual([])
  })
})
