import { readFileSync } from 'node:fs'
import { createServer as createTlsServer } from 'node:https'
import { describe, expect, it } from 'vitest'
import { listen, fakeClock, client, rejection } from './__fixtures__/http-test-server.ts'
import { HttpTlsError } from './errors.ts'

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
