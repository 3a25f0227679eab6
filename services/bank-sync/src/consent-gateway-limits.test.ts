import { randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import { createBankClient } from '@tep/bank-client'
import type { RecordProducer, TopicCodec } from '@tep/kafka'
import { createMetricsRegistry } from '@tep/observability'
import type { Consent } from '@tep/schemas'
import { createKeyring, TokenCipher } from '@tep/token-cipher'
import { afterEach, describe, expect, it } from 'vitest'
import { AuthorizationStateSigner } from './authorization-state.ts'
import { CallbackBudget } from './callback-budget.ts'
import { buildConsentGateway } from './consent-gateway.ts'
import type { GatewayLimits } from './gateway-limits.ts'
import type { ConsentView } from './consent-view.ts'
import { CustomerTokenVerifier, mintCustomerToken } from './customer-token.ts'
import { exchangedTokens, NOW } from './consent-gateway.test-support.ts'
import { createBankSyncMetrics } from './metrics.ts'
import { tokenEndpointShares } from './token-endpoint-shares.ts'

const KEY = randomBytes(32)
const bearer = async (customerId: string) => `Bearer ${await mintCustomerToken(KEY, customerId, { now: NOW })}`

interface Logged {
  level: 'warn' | 'error' | 'info'
  obj: object
  msg: string | undefined
}

function gateway(options: { secure?: boolean; limits?: Partial<GatewayLimits> } = {}) {
  const logged: Logged[] = []
  const log = (level: Logged['level']) => (obj: object, msg?: string) => void logged.push({ level, obj, msg })
  const bank = createBankClient({ baseUrl: 'http://127.0.0.1:1', clientId: 'c', clientSecret: 's', redirectUri: 'https://gw.example/consents/callback', tppName: 't' })
  const tokens = exchangedTokens({ consentId: 'b' })
  bank.authorization.exchangeCode = async () => tokens
  const viewed = new Map<string, Consent>()
  const producer: RecordProducer = { send: async () => {}, close: async () => {} }
  const app = buildConsentGateway({
    bank,
    cipher: new TokenCipher(createKeyring([{ id: 't', key: randomBytes(32) }])),
    signer: new AuthorizationStateSigner({ key: randomBytes(32), now: () => NOW }),
    view: { get: (id: string) => viewed.get(id), apply: (c: Consent) => viewed.set(c.consentId, c) } as unknown as ConsentView,
    producer,
    consentsTopic: 'bank.consents.v1',
    consentCodec: { encode: async () => Buffer.from('x') } as unknown as TopicCodec<Consent>,
    metrics: createBankSyncMetrics(createMetricsRegistry({ service: 't', defaultMetrics: false })),
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
    now: () => NOW,
    customers: new CustomerTokenVerifier({ key: KEY, now: () => NOW }),
    callbackBudget: new CallbackBudget({ maxConcurrent: 2, maxQueued: 4 }),
    secure: options.secure ?? true,
    ...(options.limits ? { limits: options.limits } : {}),
  })
  closers.push(() => app.close(), () => bank.close())
  return { app, logged }
}

let closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.map((c) => c()))
  closers = []
})

async function start(app: ReturnType<typeof gateway>['app'], customerId = 'cust-1') {
  return app.inject({ method: 'POST', url: '/consents', headers: { authorization: await bearer(customerId) }, payload: {} })
}

describe('the binding cookie', () => {
  it('is __Host- with Path=/ and Secure over TLS, so no sibling subdomain can plant it', async () => {
    const { app } = gateway({ secure: true })
    const res = await start(app)
    const cookie = String(res.headers['set-cookie'])
    expect(cookie).toMatch(/^__Host-tep_consent_[0-9a-f-]+=[A-Za-z0-9_-]{43}; /)
    expect(cookie.split('; ')).toEqual(expect.arrayContaining(['Path=/', 'Secure', 'HttpOnly', 'SameSite=Lax']))
    expect(cookie).not.toMatch(/Domain=/i)
  })

  it('ignores a cookie without the prefix (what a subdomain could set) on the callback', async () => {
    const { app } = gateway({ secure: true })
    const res = await start(app)
    const [pair] = String(res.headers['set-cookie']).split(';')
    const state = new URL((res.json() as { authorizationUrl: string }).authorizationUrl).searchParams.get('state')!
    const planted = pair!.replace('__Host-', '')
    const callback = (cookie: string) => app.inject({ method: 'GET', url: `/consents/callback?code=C&state=${encodeURIComponent(state)}`, headers: { cookie } })
    expect((await callback(planted)).json()).toMatchObject({ error: 'CONSENT_BROWSER_MISMATCH' })
    expect((await callback(pair!)).statusCode).toBe(201)
  })

  it('falls back to an unprefixed cookie on the callback path for plain-HTTP loopback (documented)', async () => {
    const { app } = gateway({ secure: false })
    const cookie = String((await start(app)).headers['set-cookie'])
    expect(cookie).toMatch(/^tep_consent_/)
    expect(cookie).toContain('Path=/consents/callback')
    expect(cookie).not.toContain('Secure')
  })
})

describe('gateway abuse limits', () => {
  it('checks the customer token before reading the body: no token and a huge or broken body is 401, not parsed', async () => {
    const { app } = gateway()
    for (const payload of ['{"broken', 'x'.repeat(100_000)]) {
      const res = await app.inject({ method: 'POST', url: '/consents', headers: { 'content-type': 'application/json' }, payload })
      expect(res.statusCode).toBe(401)
    }
    // With a token, the same oversized body is refused by the body limit.
    const big = await app.inject({ method: 'POST', url: '/consents', headers: { authorization: await bearer('c'), 'content-type': 'application/json' }, payload: `{"a":"${'x'.repeat(10_000)}"}` })
    expect(big.statusCode).toBe(413)
  })

  it('logs refused requests at warn, without what the client sent', async () => {
    const { app, logged } = gateway()
    const res = await app.inject({ method: 'POST', url: '/consents', headers: { authorization: await bearer('c'), 'content-type': 'application/json' }, payload: '{"secret-looking-body' })
    expect(res.statusCode).toBe(400)
    expect(logged.filter((l) => l.level === 'error')).toEqual([])
    const warned = logged.filter((l) => l.level === 'warn')
    expect(warned).toHaveLength(1)
    expect(JSON.stringify(warned)).not.toContain('secret-looking-body')
  })

  it('limits starts per customer (429 with Retry-After) without touching other customers', async () => {
    const { app } = gateway({ limits: { perCustomer: { max: 3, windowMs: 600_000 } } })
    for (let i = 0; i < 3; i++) expect((await start(app, 'greedy')).statusCode).toBe(201)
    const refused = await start(app, 'greedy')
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toMatchObject({ error: 'CONSENT_CUSTOMER_LIMIT' })
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect((await start(app, 'someone-else')).statusCode).toBe(201)
  })

  it('limits callbacks per customer of the signed state, before the code exchange', async () => {
    const { app } = gateway({ limits: { perCustomer: { max: 1, windowMs: 600_000 } } })
    const res = await start(app, 'c1')
    const [cookie] = String(res.headers['set-cookie']).split(';')
    const state = new URL((res.json() as { authorizationUrl: string }).authorizationUrl).searchParams.get('state')!
    const callback = () => app.inject({ method: 'GET', url: `/consents/callback?code=C&state=${encodeURIComponent(state)}`, headers: { cookie: cookie! } })
    expect((await callback()).statusCode).toBe(201)
    expect((await callback()).statusCode).toBe(429)
  })

  it('cuts off a client that sends its body too slowly (request timeout: 408, connection closed)', async () => {
    const { app } = gateway({ limits: { requestTimeoutMs: 300, headersTimeoutMs: 300 } })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', (d: Buffer) => (answer += d.toString()))
    socket.write(`POST /consents HTTP/1.1\r\nHost: x\r\nAuthorization: ${await bearer('slow')}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`)
    // Nothing more is sent: the server must end it, not wait forever.
    await new Promise<void>((resolve) => socket.on('close', () => resolve()))
    expect(answer).toMatch(/^HTTP\/1\.1 408/)
  })

  it('drops connections beyond the cap', async () => {
    const { app } = gateway({ limits: { maxConnections: 1 } })
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    const accepted = new Promise<void>((resolve) => app.server.once('connection', () => resolve()))
    const first = connect(port, '127.0.0.1')
    first.write('GET /healthz HTTP/1.1\r\nHost: x\r\n') // held open, headers unfinished
    await accepted
    const dropped = new Promise<void>((resolve) => app.server.once('drop', () => resolve()))
    const second = connect(port, '127.0.0.1')
    let data = ''
    second.on('data', (d: Buffer) => (data += d.toString()))
    second.on('error', () => {})
    await Promise.all([dropped, new Promise<void>((resolve) => second.on('close', () => resolve()))])
    expect(data).toBe('')
    first.destroy()
  })
})

describe('the bank token endpoint budget across replicas', () => {
  it.each([1, 2, 3, 7])('keeps %i instances together within 900 calls per window', (replicas) => {
    const shares = tokenEndpointShares(900, replicas)
    expect((shares.gateway + shares.sync) * replicas).toBeLessThanOrEqual(900)
    expect(shares.gateway).toBeGreaterThan(0)
  })
  it('gives one instance the whole budget, a third to callbacks', () => {
    expect(tokenEndpointShares(900, 1)).toEqual({ gateway: 300, sync: 600 })
  })
})
