import { randomBytes } from 'node:crypto'
import { createBankClient, type TokenSet } from '@tep/bank-client'
import { SILENT_LOGGER, type TopicCodec } from '@tep/kafka'
import { createMetricsRegistry } from '@tep/observability'
import type { Consent } from '@tep/schemas'
import { createKeyring, TokenCipher } from '@tep/token-cipher'
import type { Producer } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { AuthorizationStateSigner } from './authorization-state.ts'
import { buildConsentGateway } from './consent-gateway.ts'
import type { ConsentView } from './consent-view.ts'
import { createBankSyncMetrics } from './metrics.ts'

const NOW = Date.parse('2026-05-04T08:00:00Z')
const REDIRECT = 'http://127.0.0.1:8190/consents/callback'

function setup(options: { failWrite?: boolean } = {}) {
  const bank = createBankClient({
    baseUrl: 'http://127.0.0.1:1',
    clientId: 'client',
    clientSecret: 'secret',
    redirectUri: REDIRECT,
    tppName: 'test',
  })
  const tokens: TokenSet = {
    accessToken: 'ACCESS-TOKEN-CLEAR',
    refreshToken: 'REFRESH-TOKEN-CLEAR',
    tokenType: 'Bearer',
    scope: 'AISP',
    accessTokenExpiresAt: new Date(NOW + 3_600_000),
    refreshTokenExpiresAt: new Date(NOW + 90 * 86_400_000),
    obtainedAt: new Date(NOW),
    grant: 'authorization_code',
    consentId: 'bank-consent',
  }
  const exchanged: string[] = []
  bank.authorization.exchangeCode = async (code: string) => {
    exchanged.push(code)
    return tokens
  }
  const written: Consent[] = []
  const viewed = new Map<string, Consent>()
  const producer = {
    send: async () => {
      if (options.failWrite) throw new Error('broker down')
      return []
    },
  } as unknown as Producer
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
  })
  return { app, bank, written, exchanged, cipher }
}

let closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.map((c) => c()))
  closers = []
})

async function startConsent(
  app: ReturnType<typeof setup>['app'],
): Promise<{ consentId: string; state: string }> {
  const res = await app.inject({ method: 'POST', url: '/consents', payload: { customerId: 'cust-1' } })
  expect(res.statusCode).toBe(201)
  const body = res.json() as { consentId: string; authorizationUrl: string }
  return {
    consentId: body.consentId,
    state: new URL(body.authorizationUrl).searchParams.get('state') as string,
  }
}

describe('consent gateway', () => {
  it('records an ACTIVE accounts consent with sealed tokens bound to it, 90-day expiry and no watermarks', async () => {
    const { app, bank, written, exchanged, cipher } = setup()
    closers.push(
      () => bank.close(),
      () => app.close(),
    )
    const { consentId, state } = await startConsent(app)
    const res = await app.inject({
      method: 'GET',
      url: `/consents/callback?code=CODE-1&state=${encodeURIComponent(state)}`,
    })
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
    expect(cipher.decrypt(consent?.refreshToken as string, consentId)).toBe('REFRESH-TOKEN-CLEAR')
    expect(() => cipher.decrypt(consent?.refreshToken as string, 'another-consent')).toThrow()
    expect(res.body).not.toContain('TOKEN')

    const shown = await app.inject({ method: 'GET', url: `/consents/${consentId}` })
    expect(shown.json()).toMatchObject({ consentId, status: 'ACTIVE' })
    expect(shown.body).not.toContain('v1.')
  })

  it('answers 503 CONSENT_NOT_RECORDED when the consent cannot be written', async () => {
    const { app, bank } = setup({ failWrite: true })
    closers.push(
      () => bank.close(),
      () => app.close(),
    )
    const { state } = await startConsent(app)
    const res = await app.inject({
      method: 'GET',
      url: `/consents/callback?code=C&state=${encodeURIComponent(state)}`,
    })
    expect(res.statusCode).toBe(503)
    expect(res.json()).toMatchObject({ error: 'CONSENT_NOT_RECORDED' })
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
      payload: { customerId: 'c', scope: 'PISP' },
    })
    expect(scope.statusCode).toBe(400)
    expect(scope.json()).toMatchObject({ error: 'SCOPE_UNSUPPORTED' })
    const noState = await app.inject({ method: 'GET', url: '/consents/callback?code=x' })
    expect(noState.statusCode).toBe(400)
    expect(noState.json()).toMatchObject({ error: 'CONSENT_STATE_MISSING' })
  })
})
