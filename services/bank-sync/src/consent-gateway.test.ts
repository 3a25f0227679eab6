import { randomBytes } from 'node:crypto'
import { BankOAuthError, createBankClient, type TokenSet } from '@tep/bank-client'
import { SILENT_LOGGER, type RecordProducer, type TopicCodec } from '@tep/kafka'
import { createMetricsRegistry } from '@tep/observability'
import type { Consent } from '@tep/schemas'
import { createKeyring, TokenCipher } from '@tep/token-cipher'
import { afterEach, describe, expect, it } from 'vitest'
import { AuthorizationStateSigner } from './authorization-state.ts'
import { hashOf } from './browser-binding.ts'
import { CallbackBudget } from './callback-budget.ts'
import { CustomerTokenVerifier, mintCustomerToken } from './customer-token.ts'
import { buildConsentGateway } from './consent-gateway.ts'
import type { ConsentView } from './consent-view.ts'
import { exchangedTokens, NOW } from './consent-gateway.test-support.ts'
import { createBankSyncMetrics } from './metrics.ts'

const REDIRECT = 'http://127.0.0.1:8190/consents/callback'

const CUSTOMER_KEY = randomBytes(32)
const bearer = async (customerId: string, key = CUSTOMER_KEY) =>
  `Bearer ${await mintCustomerToken(key, customerId, { now: NOW })}`

function setup(
  options: {
    failWrite?: boolean
    exchange?: (code: string, verifier: string | undefined) => Promise<TokenSet>
    budget?: CallbackBudget
  } = {},
) {
  const bank = createBankClient({
    baseUrl: 'http://127.0.0.1:1',
    clientId: 'client',
    clientSecret: 'secret',
    redirectUri: REDIRECT,
    tppName: 'test',
  })
  const tokens = exchangedTokens({ accessToken: 'ACCESS-TOKEN-CLEAR', refreshToken: 'REFRESH-TOKEN-CLEAR' })
  const exchanged: string[] = []
  const verifiers: Array<string | undefined> = []
  bank.authorization.exchangeCode = async (code: string, opts: { codeVerifier?: string }) => {
    exchanged.push(code)
    verifiers.push(opts.codeVerifier)
    return options.exchange === undefined ? tokens : options.exchange(code, opts.codeVerifier)
  }
  const written: Consent[] = []
  const viewed = new Map<string, Consent>()
  const producer: RecordProducer = {
    send: async () => {
      if (options.failWrite) throw new Error('broker down')
    },
    close: async () => {},
  }
  const codec = {
    encode: async (c: Consent) => {
      written.push(c)
      return Buffer.from('x')
    },
  } as unknown as TopicCodec<Consent>
  const view = {
    get: (id: string) => viewed.get(id),
    apply: (c: Consent) => viewed.set(c.consentId, c),
  } as unknown as ConsentView
  const cipher = new TokenCipher(createKeyring([{ id: 't', key: randomBytes(32) }]))
  const app = buildConsentGateway({
    bank,
    cipher,
    signer: new AuthorizationStateSigner({ key: randomBytes(32), now: () => NOW }),
    view,
    producer,
    consentsTopic: 'bank.consents.v1',
    consentCodec: codec,
    metrics: createBankSyncMetrics(createMetricsRegistry({ service: 't', defaultMetrics: false })),
    logger: SILENT_LOGGER,
    now: () => NOW,
    customers: new CustomerTokenVerifier({ key: CUSTOMER_KEY, now: () => NOW }),
    callbackBudget: options.budget ?? new CallbackBudget({ maxConcurrent: 2, maxQueued: 4 }),
    secure: false,
  })
  return { app, bank, written, exchanged, verifiers, cipher, tokens }
}

let closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.map((c) => c()))
  closers = []
})

async function startConsent(
  app: ReturnType<typeof setup>['app'],
  customerId = 'cust-1',
): Promise<{ consentId: string; state: string; cookie: string; challenge: string | null }> {
  const res = await app.inject({
    method: 'POST',
    url: '/consents',
    headers: { authorization: await bearer(customerId) },
    payload: {},
  })
  expect(res.statusCode).toBe(201)
  const body = res.json() as { consentId: string; authorizationUrl: string }
  const setCookie = String(res.headers['set-cookie'])
  const url = new URL(body.authorizationUrl)
  return {
    consentId: body.consentId,
    state: url.searchParams.get('state') as string,
    cookie: setCookie.split(';')[0] as string,
    challenge: url.searchParams.get('code_challenge'),
  }
}

function callback(app: ReturnType<typeof setup>['app'], state: string, cookie: string | undefined, code = 'CODE-1') {
  return app.inject({
    method: 'GET',
    url: `/consents/callback?code=${code}&state=${encodeURIComponent(state)}`,
    headers: cookie === undefined ? {} : { cookie },
  })
}

describe('consent gateway', () => {
  it('records an ACTIVE accounts consent with sealed tokens bound to it, 90-day expiry and no watermarks', async () => {
    const { app, bank, written, exchanged, cipher } = setup()
    closers.push(
      () => bank.close(),
      () => app.close(),
    )
    const { consentId, state, cookie } = await startConsent(app)
    const res = await callback(app, state, cookie)
    expect(res.statusCode).toBe(201)
    expect(exchanged).toEqual(['CODE-1'])
    const consent = written[0]
    expect(consent).toMatchObject({
      consentId,
      customerId: 'cust-1',
      status: 'ACTIVE',
      scopes: ['AISP'],
      grantedAt: NOW,
      tokenIssuedAt: NOW,
      expiresAt: NOW + 90 * 86_400_000,
      accounts: [],
      version: 1,
    })
    expect(JSON.stringify(consent)).not.toContain('TOKEN-CLEAR')
    expect(cipher.decrypt(consent?.refreshToken as string, [consentId, 'cust-1'])).toBe('REFRESH-TOKEN-CLEAR')
    expect(() => cipher.decrypt(consent?.refreshToken as string, ['another-consent', 'cust-1'])).toThrow()
    // Bound to the customer too: the same consent under another customerId does not open.
    expect(() => cipher.decrypt(consent?.refreshToken as string, [consentId, 'attacker'])).toThrow()
    expect(res.body).not.toContain('TOKEN')

    const shown = await app.inject({
      method: 'GET',
      url: `/consents/${consentId}`,
      headers: { authorization: await bearer('cust-1') },
    })
    expect(shown.json()).toMatchObject({ consentId, status: 'ACTIVE' })
    expect(shown.body).not.toContain('v1.')
  })

  it('answers 503 CONSENT_NOT_RECORDED when the consent cannot be written', async () => {
    const { app, bank } = setup({ failWrite: true })
    closers.push(
      () => bank.close(),
      () => app.close(),
    )
    const { state, cookie } = await startConsent(app)
    const res = await callback(app, state, cookie, 'C')
    expect(res.statusCode).toBe(503)
    expect(res.json()).toMatchObject({ error: 'CONSENT_NOT_RECORDED' })
  })

  it('revokes the bank grant of a consent it could not record, by replaying its code (RFC 6749 §4.1.2)', async () => {
    const used = new Set<string>()
    let revoked = 0
    const { app, bank, exchanged, verifiers } = setup({
      failWrite: true,
      // The bank's rule: a code used twice is refused and what it issued revoked.
      exchange: async (code) => {
        if (used.has(code)) {
          revoked++
          throw new BankOAuthError('invalid_grant: authorization code was already used', { operation: 'token', oauthError: 'invalid_grant', requestId: 'r-1' })
        }
        used.add(code)
        return { accessToken: 'A', refreshToken: 'R', tokenType: 'Bearer', scope: 'AISP', accessTokenExpiresAt: new Date(NOW + 3_600_000), refreshTokenExpiresAt: new Date(NOW + 90 * 86_400_000), obtainedAt: new Date(NOW), grant: 'authorization_code', consentId: 'b' }
      },
    })
    closers.push(
      () => bank.close(),
      () => app.close(),
    )
    const { state, cookie } = await startConsent(app)
    const res = await callback(app, state, cookie, 'CODE-LIVE')
    expect(res.statusCode).toBe(503)
    expect(exchanged).toEqual(['CODE-LIVE', 'CODE-LIVE'])
    // The replay carries the same PKCE verifier: nothing but the reuse can refuse it.
    expect(verifiers[1]).toBe(verifiers[0])
    expect(revoked).toBe(1)
    // The callback cannot be replayed into a second grant either.
    expect((await callback(app, state, cookie, 'CODE-LIVE')).statusCode).toBe(400)
  })

  it('refuses scopes it does not sync and a callback without state', async () => {
    const { app, bank } = setup()
    closers.push(
      () => bank.close(),
      () => app.close(),
    )
    const scope = await app.inject({
      method: 'POST',
      url: '/consents',
      headers: { authorization: await bearer('c') },
      payload: { scope: 'PISP' },
    })
    expect(scope.statusCode).toBe(400)
    expect(scope.json()).toMatchObject({ error: 'SCOPE_UNSUPPORTED' })
    const noState = await app.inject({ method: 'GET', url: '/consents/callback?code=x' })
    expect(noState.statusCode).toBe(400)
    expect(noState.json()).toMatchObject({ error: 'CONSENT_STATE_MISSING' })
  })

  it('takes the customer only from a valid customer token, never from the request', async () => {
    const { app, bank } = setup()
    closers.push(
      () => bank.close(),
      () => app.close(),
    )
    const post = (headers: Record<string, string>, payload: object = {}) =>
      app.inject({ method: 'POST', url: '/consents', headers, payload })
    const none = await post({}, { customerId: 'victim' })
    expect(none.statusCode).toBe(401)
    expect(none.json()).toMatchObject({ error: 'CUSTOMER_TOKEN_MISSING' })
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/)
    const wrongKey = await post({ authorization: await bearer('cust-1', randomBytes(32)) })
    expect(wrongKey.json()).toMatchObject({ error: 'CUSTOMER_TOKEN_INVALID' })
    const expired = await post({
      authorization: `Bearer ${await mintCustomerToken(CUSTOMER_KEY, 'cust-1', { now: NOW - 10 * 60_000 })}`,
    })
    expect(expired.json()).toMatchObject({ error: 'CUSTOMER_TOKEN_EXPIRED' })
    const tooLong = await post({
      authorization: `Bearer ${await mintCustomerToken(CUSTOMER_KEY, 'cust-1', { now: NOW, lifetimeMs: 86_400_000 })}`,
    })
    expect(tooLong.json()).toMatchObject({ error: 'CUSTOMER_TOKEN_INVALID' })
    const mismatch = await post({ authorization: await bearer('cust-1') }, { customerId: 'someone-else' })
    expect(mismatch.statusCode).toBe(403)
    const link = await app.inject({ method: 'GET', url: '/consents/start?customerId=attacker' })
    expect(link.statusCode).toBe(410)
  })

  it('binds the flow to the starting browser (HttpOnly SameSite cookie) and to PKCE S256', async () => {
    const { app, bank, written, exchanged, verifiers } = setup()
    closers.push(
      () => bank.close(),
      () => app.close(),
    )
    const res = await app.inject({
      method: 'POST',
      url: '/consents',
      headers: { authorization: await bearer('cust-1') },
      payload: {},
    })
    const setCookie = String(res.headers['set-cookie'])
    expect(setCookie).toMatch(/HttpOnly/)
    expect(setCookie).toMatch(/SameSite=Lax/)
    expect(setCookie).toMatch(/Path=\/consents\/callback/)
    const { state, cookie, challenge } = await startConsent(app)
    expect(new URL((res.json() as { authorizationUrl: string }).authorizationUrl).searchParams.get('code_challenge_method')).toBe('S256')
    // The bank's redirect opened in a browser without the cookie (a forwarded or forged link).
    const elsewhere = await callback(app, state, undefined)
    expect(elsewhere.statusCode).toBe(403)
    expect(elsewhere.json()).toMatchObject({ error: 'CONSENT_BROWSER_MISMATCH' })
    const otherCookie = await callback(app, state, `${cookie.split('=')[0]}=${'x'.repeat(43)}`)
    expect(otherCookie.statusCode).toBe(403)
    expect(exchanged).toEqual([])
    expect(written).toEqual([])
    const ok = await callback(app, state, cookie)
    expect(ok.statusCode).toBe(201)
    // The verifier sent to the bank is the cookie's secret, whose hash was the challenge.
    expect(hashOf(verifiers[0] as string)).toBe(challenge)
    expect(String(ok.headers['set-cookie'])).toMatch(/Max-Age=0/)
    const replay = await callback(app, state, cookie)
    expect(replay.json()).toMatchObject({ error: 'CONSENT_STATE_REUSED' })
  })

  it('lets the customer retry a callback whose code exchange failed on an unreachable bank', async () => {
    let failures = 1
    const base = setup()
    const { app, bank, written } = setup({
      exchange: async () => {
        if (failures-- > 0) throw new Error('connect ECONNREFUSED')
        return base.tokens
      },
    })
    closers.push(
      () => bank.close(),
      () => app.close(),
      () => base.bank.close(),
      () => base.app.close(),
    )
    const { state, cookie } = await startConsent(app)
    const first = await callback(app, state, cookie)
    expect(first.statusCode).toBe(502)
    expect(first.json()).toMatchObject({ error: 'BANK_UNAVAILABLE' })
    const retry = await callback(app, state, cookie)
    expect(retry.statusCode).toBe(201)
    expect(written).toHaveLength(1)
  })

  it('shows and ends consents only to their own customer', async () => {
    const { app, bank } = setup()
    closers.push(
      () => bank.close(),
      () => app.close(),
    )
    const { consentId, state, cookie } = await startConsent(app, 'owner')
    expect((await callback(app, state, cookie)).statusCode).toBe(201)
    const as = async (method: 'GET' | 'DELETE', customer?: string) =>
      app.inject({
        method,
        url: `/consents/${consentId}`,
        headers: customer === undefined ? {} : { authorization: await bearer(customer) },
      })
    expect((await as('GET')).statusCode).toBe(401)
    expect((await as('GET', 'intruder')).statusCode).toBe(404)
    expect((await as('DELETE', 'intruder')).statusCode).toBe(404)
    expect((await as('GET', 'owner')).json()).toMatchObject({ status: 'ACTIVE' })
    expect((await as('DELETE', 'owner')).json()).toMatchObject({ status: 'ENDED' })
  })

  it('sends security headers on every answer', async () => {
    const { app, bank } = setup()
    closers.push(
      () => bank.close(),
      () => app.close(),
    )
    for (const res of [
      await app.inject({ method: 'GET', url: '/healthz' }),
      await app.inject({ method: 'GET', url: '/consents/callback?code=x', headers: { accept: 'text/html' } }),
    ]) {
      expect(res.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/)
      expect(res.headers['content-security-policy']).toMatch(/default-src 'none'/)
      expect(res.headers['referrer-policy']).toBe('no-referrer')
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      expect(res.headers['x-frame-options']).toBe('DENY')
    }
  })

  it('refuses callbacks beyond their bounded budget at once instead of queueing them', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => {
      release = r
    })
    const base = setup()
    const { app, bank, exchanged } = setup({
      budget: new CallbackBudget({ maxConcurrent: 1, maxQueued: 1 }),
      exchange: async () => {
        await gate
        throw Object.assign(new Error('refused'), {})
      },
    })
    closers.push(
      () => bank.close(),
      () => app.close(),
      () => base.bank.close(),
      () => base.app.close(),
    )
    const flows = await Promise.all([1, 2, 3, 4].map(() => startConsent(app)))
    const answered: Array<Awaited<ReturnType<typeof callback>>> = []
    let twoAnswered!: () => void
    const two = new Promise<void>((r) => {
      twoAnswered = r
    })
    const pending = flows.map((f) =>
      callback(app, f.state, f.cookie).then((res) => {
        answered.push(res)
        if (answered.length === 2) twoAnswered()
        return res
      }),
    )
    // Two hold the budget (one running, one waiting) and cannot finish before release():
    // the two answers that come first are the refusals, made without a token call.
    await two
    for (const res of answered) {
      expect(res.statusCode).toBe(503)
      expect(res.json()).toMatchObject({ error: 'CONSENT_CALLBACKS_BUSY' })
      expect(res.headers['retry-after']).toBe('5')
    }
    expect(exchanged).toHaveLength(1)
    release()
    await Promise.all(pending)
    expect(exchanged).toHaveLength(2)
  })
})
