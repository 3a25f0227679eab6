import { describe, expect, it } from 'vitest'
import { cleanups, startServer, json, fakeClock, client, rejection } from './__fixtures__/http-test-server.ts'
import { HttpAbortedError, HttpStatusError, ThrottledError } from './errors.ts'
import type { RetryInfo } from './client-options.ts'
import { createRequestLimiter } from './rate-limits.ts'

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
