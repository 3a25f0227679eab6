import { describe, expect, it } from 'vitest'
import {
  type Handler,
  startServer,
  json,
  fakeClock,
  client,
  rejection,
  closedPort,
} from './__fixtures__/http-test-server.ts'
import { HttpAbortedError, HttpNetworkError, HttpTimeoutError } from './errors.ts'
import type { HttpClock, RetryInfo } from './client-options.ts'

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
