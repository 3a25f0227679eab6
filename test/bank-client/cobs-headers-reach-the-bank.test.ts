import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBankClient, type BankClient } from '@tep/bank-client'

/**
 * A recording stand-in for the bank: answers each request from a script and keeps what it
 * received, so the test sees the exact headers and bodies on the wire.
 */
interface Seen {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}
let server: Server
let base: string
const seen: Seen[] = []
const script: Array<{ status: number; body: unknown; headers?: Record<string, string> }> = []

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString('utf8')))
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
      const next = script.shift() ?? { status: 500, body: { errors: [{ error: 'NARR' }] } }
      res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers })
      res.end(JSON.stringify(next.body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

function client(): BankClient {
  return createBankClient({
    baseUrl: base,
    clientId: 'client-42',
    clientSecret: 'very-secret-value',
    redirectUri: 'http://127.0.0.1:8190/cb',
    tppName: 'TEP Tests',
    tppIdentification: 'CZ013574-15',
    retry: { initialDelayMs: 1, maxDelayMs: 2 },
    now: () => new Date('2026-05-04T08:00:00Z'),
  })
}

const page = { pageNumber: 0, pageCount: 1, pageSize: 100, totalCount: 0, accounts: [] }
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('what the client puts on the wire', () => {
  it('sends the COBS 3.0 headers, a new X-Request-ID per call and the same one across retries', async () => {
    const bank = client()
    seen.length = 0
    script.push(
      { status: 503, body: { errors: [{ error: 'NARR' }] } },
      { status: 200, body: page },
      { status: 200, body: page },
    )
    const user = {
      involved: true,
      ipAddress: '198.51.100.7',
      userAgent: 'Mozilla/5.0',
      geoLocation: 'GEO:50.0875;14.4213',
      deviceOs: 'Linux',
    }
    await bank.accounts.listAccounts({ accessToken: 'at-1', user })
    await bank.accounts.listAccounts({ accessToken: 'at-1' })
    await bank.close()

    expect(seen).toHaveLength(3)
    const [first, retry, other] = seen as [Seen, Seen, Seen]
    expect(first.headers).toMatchObject({
      authorization: 'Bearer at-1',
      'x-ibm-client-id': 'client-42',
      'tpp-name': 'TEP Tests',
      'tpp-identification': 'CZ013574-15',
      date: 'Mon, 04 May 2026 08:00:00 GMT',
      'user-involved': 'true',
      'user-ip-address': '198.51.100.7',
      'user-user-agent': 'Mozilla/5.0',
      'user-geo-location': 'GEO:50.0875;14.4213',
      'user-device-os': 'Linux',
    })
    expect(first.headers['x-request-id']).toMatch(UUID)
    expect(retry.headers['x-request-id']).toBe(first.headers['x-request-id'])
    expect(other.headers['x-request-id']).toMatch(UUID)
    expect(other.headers['x-request-id']).not.toBe(first.headers['x-request-id'])
    expect(other.headers['user-involved']).toBe('false')
    expect(other.headers['user-ip-address']).toBeUndefined()
    expect(first.url).toBe('/accounts?page=0&size=100')
  })

  it('sends the token requests as the contract says, without a bearer token', async () => {
    const bank = client()
    seen.length = 0
    const tokenBody = {
      access_token: 'a',
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: 'r2',
      scope: 'AISP',
    }
    script.push(
      { status: 200, body: tokenBody },
      { status: 200, body: { ...tokenBody, refresh_token: 'r3' } },
    )
    const t = await bank.authorization.exchangeCode('code-1', { scope: 'AISP' })
    const r = await bank.authorization.refresh(t.refreshToken, { scope: 'AISP' })
    await bank.close()
    expect(r.refreshToken).toBe('r3')
    const [exchange, refresh] = seen as [Seen, Seen]
    expect(exchange.method).toBe('POST')
    expect(exchange.url).toBe('/oauth2/token')
    expect(exchange.headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(exchange.headers.authorization).toBeUndefined()
    expect(Object.fromEntries(new URLSearchParams(exchange.body))).toEqual({
      grant_type: 'authorization_code',
      code: 'code-1',
      redirect_uri: 'http://127.0.0.1:8190/cb',
      client_id: 'client-42',
      client_secret: 'very-secret-value',
    })
    expect(Object.fromEntries(new URLSearchParams(refresh.body))).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'r2',
      client_id: 'client-42',
      client_secret: 'very-secret-value',
    })
  })

  it('does not retry a created payment that met a 503, and puts the return URL in TPP-Redirect-URI when signing', async () => {
    const bank = client()
    seen.length = 0
    script.push(
      { status: 503, body: { errors: [{ error: 'NARR' }] } },
      {
        status: 200,
        body: {
          authorizationType: 'USERAGENT_REDIRECT',
          href: { url: 'https://bank.example/sign/1' },
          method: 'GET',
          signInfo: { state: 'OPEN' },
        },
      },
    )
    const req = {
      paymentIdentification: { instructionIdentification: 'p-1' },
      amount: { instructedAmount: { value: '1234.50', currency: 'CZK' } },
      debtorAccount: { identification: { iban: 'CZ3155000000000000000043' } },
      creditorAccount: { identification: { iban: 'CZ6508000000192000145399' } },
    }
    await expect(bank.payments.createPayment(req, { accessToken: 'at' })).rejects.toMatchObject({
      code: 'BANK_UNAVAILABLE',
      status: 503,
    })
    const redirect = await bank.payments.signPayment('PMT 1', 'sig/1', 'http://127.0.0.1:8190/return?x=1', {
      accessToken: 'at',
    })
    await bank.close()
    expect(seen).toHaveLength(2)
    expect(JSON.parse(seen[0]!.body)).toMatchObject({
      amount: { instructedAmount: { value: 1234.5, currency: 'CZK' } },
    })
    expect(seen[1]!.url).toBe('/payments/PMT%201/sign/sig%2F1')
    expect(seen[1]!.headers['tpp-redirect-uri']).toBe('http://127.0.0.1:8190/return?x=1')
    expect(redirect).toMatchObject({ url: 'https://bank.example/sign/1', method: 'GET' })
  })

  it('keeps tokens and the client secret out of errors', async () => {
    const bank = client()
    script.push(
      { status: 401, body: { error: 'invalid_grant', error_description: 'nope' } },
      { status: 401, body: { errors: [{ error: 'UNAUTHORISED' }] } },
    )
    const e1 = await bank.authorization
      .refresh('refresh-SECRET-token', { scope: 'AISP' })
      .catch((e: unknown) => e)
    const e2 = await bank.accounts
      .listAccounts({ accessToken: 'access-SECRET-token' })
      .catch((e: unknown) => e)
    await bank.close()
    for (const e of [e1, e2]) {
      const text = `${String(e)} ${JSON.stringify(e)} ${JSON.stringify((e as Error).cause)}`
      expect(text).not.toMatch(/SECRET|very-secret-value/)
    }
  })
})
