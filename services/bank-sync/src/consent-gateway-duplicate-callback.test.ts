import { randomBytes } from 'node:crypto'
import { createBankClient, type TokenSet } from '@tep/bank-client'
import { SILENT_LOGGER, type RecordProducer, type TopicCodec } from '@tep/kafka'
import { createMetricsRegistry } from '@tep/observability'
import type { Consent } from '@tep/schemas'
import { createKeyring, TokenCipher } from '@tep/token-cipher'
import { afterEach, describe, expect, it } from 'vitest'
import { AuthorizationStateSigner } from './authorization-state.ts'
import { CallbackBudget } from './callback-budget.ts'
import { buildConsentGateway } from './consent-gateway.ts'
import type { ConsentView } from './consent-view.ts'
import { CustomerTokenVerifier, mintCustomerToken } from './customer-token.ts'
import { exchangedTokens, NOW } from './consent-gateway.test-support.ts'
import { createBankSyncMetrics } from './metrics.ts'

const CUSTOMER_KEY = randomBytes(32)
const STATE_KEY = randomBytes(32)

/**
 * Two replicas of the gateway: same state key, one consents topic (a shared view here, as
 * both read the whole topic), each its own memory of used states and its own bank client.
 * The bank, like a real one, revokes the grant when a code is exchanged twice.
 */
function replicas() {
  const viewed = new Map<string, Consent>()
  const bank = { exchanges: 0, revoked: false }
  const closers: Array<() => Promise<void>> = []
  const make = () => {
    const client = createBankClient({ baseUrl: 'http://127.0.0.1:1', clientId: 'c', clientSecret: 's', redirectUri: 'http://127.0.0.1:8190/consents/callback', tppName: 't' })
    client.authorization.exchangeCode = async (): Promise<TokenSet> => {
      bank.exchanges++
      if (bank.exchanges > 1) bank.revoked = true
      return exchangedTokens()
    }
    const app = buildConsentGateway({
      bank: client,
      cipher: new TokenCipher(createKeyring([{ id: 't', key: randomBytes(32) }])),
      signer: new AuthorizationStateSigner({ key: STATE_KEY, now: () => NOW }),
      view: { get: (id: string) => viewed.get(id), apply: (c: Consent) => viewed.set(c.consentId, c) } as unknown as ConsentView,
      producer: { send: async () => {}, close: async () => {} } as RecordProducer,
      consentsTopic: 'bank.consents.v1',
      consentCodec: { encode: async () => Buffer.from('x') } as unknown as TopicCodec<Consent>,
      metrics: createBankSyncMetrics(createMetricsRegistry({ service: 't', defaultMetrics: false })),
      logger: SILENT_LOGGER,
      now: () => NOW,
      customers: new CustomerTokenVerifier({ key: CUSTOMER_KEY, now: () => NOW }),
      callbackBudget: new CallbackBudget({ maxConcurrent: 2, maxQueued: 4 }),
      secure: false,
    })
    closers.push(() => app.close(), () => client.close())
    return app
  }
  return { a: make(), b: make(), bank, viewed, close: () => Promise.all(closers.map((c) => c())) }
}

let close: (() => Promise<unknown>) | undefined
afterEach(async () => {
  await close?.()
})

describe('the same consent callback on two replicas', () => {
  it('is recorded once; the second replica never replays the code, so the bank never revokes the consent just recorded', async () => {
    const r = replicas()
    close = r.close
    const started = await r.a.inject({
      method: 'POST',
      url: '/consents',
      headers: { authorization: `Bearer ${await mintCustomerToken(CUSTOMER_KEY, 'cust-1', { now: NOW })}` },
      payload: {},
    })
    expect(started.statusCode).toBe(201)
    const { consentId, authorizationUrl } = started.json() as { consentId: string; authorizationUrl: string }
    const state = new URL(authorizationUrl).searchParams.get('state') as string
    const cookie = String(started.headers['set-cookie']).split(';')[0] as string
    const url = `/consents/callback?code=CODE-1&state=${encodeURIComponent(state)}`

    const first = await r.a.inject({ method: 'GET', url, headers: { cookie } })
    expect(first.statusCode).toBe(201)
    expect(r.viewed.get(consentId)?.status).toBe('ACTIVE')
    // The browser's retry reaches the other replica, which has not seen this state used.
    const second = await r.b.inject({ method: 'GET', url, headers: { cookie, accept: 'application/json' } })
    expect(second.statusCode).toBe(409)
    expect(second.json()).toMatchObject({ error: 'CONSENT_ALREADY_RECORDED' })
    expect(r.bank.exchanges).toBe(1)
    expect(r.bank.revoked).toBe(false)
  })
})
