import { describe, expect, it } from 'vitest'
import { builtInMerchantSource } from '../data/merchant-source.ts'
import { DEFAULT_REGISTERED_CLIENT } from '../oauth/registered-client.ts'
import { buildBankSim } from '../server.ts'
import { ContractDriftMode } from './contract-drift.ts'

const WALL = Date.parse('2026-05-04T08:00:00Z')
const modelled = { access_token: 'at', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt', refresh_token_expires_in: 7_776_000, scope: 'AISP', consent_id: 'c' }

function sim(contractDrift: string | undefined) {
  const { app, context } = buildBankSim({
    clients: 1,
    historyDays: 5,
    merchants: builtInMerchantSource('drift-test'),
    wallClock: () => WALL,
    ...(contractDrift === undefined ? {} : { contractDrift }),
  })
  return { app, context }
}

async function consentTokens(app: ReturnType<typeof sim>['app'], scope = 'AISP') {
  const granted = await app.inject({ method: 'POST', url: '/__admin/consents', payload: { username: 'user1', scope } })
  const { code, consentId } = granted.json<{ code: string; consentId: string }>()
  const res = await app.inject({
    method: 'POST',
    url: '/oauth2/token',
    payload: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: DEFAULT_REGISTERED_CLIENT.redirectUris[0] as string, client_id: DEFAULT_REGISTERED_CLIENT.clientId, client_secret: DEFAULT_REGISTERED_CLIENT.clientSecret }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
  return { consentId, status: res.statusCode, body: res.json<Record<string, unknown>>() }
}

const api = (token: string) => ({ authorization: `Bearer ${token}`, 'x-request-id': 'r-1', 'x-ibm-client-id': DEFAULT_REGISTERED_CLIENT.clientId })

describe('contract-drift mode', () => {
  it('is seeded: the same seed draws the same answers, and each distinct draw is logged once', () => {
    const logged: string[] = []
    const logger = { info: (obj: object) => logged.push(`${(obj as { contractDrift: string }).contractDrift}=${(obj as { variant: string }).variant}`) }
    const a = new ContractDriftMode('s-1', logger)
    const b = new ContractDriftMode('s-1')
    const answersA = Array.from({ length: 40 }, () => a.tokenAnswer(modelled))
    expect(Array.from({ length: 40 }, () => b.tokenAnswer(modelled))).toEqual(answersA)
    expect(a.paymentsPath).toBe(b.paymentsPath)
    // 40 answers vary every open aspect of the token answer
    expect(answersA.some((t) => !('expires_in' in t))).toBe(true)
    expect(answersA.some((t) => typeof t.expires_in === 'string')).toBe(true)
    expect(answersA.some((t) => t.scope === 'AISP offline_access')).toBe(true)
    expect(answersA.some((t) => t.scope === 'openid AISP')).toBe(true)
    expect(answersA.some((t) => 'session_state' in t)).toBe(true)
    expect(answersA.some((t) => typeof t.refresh_token_expires_in === 'string')).toBe(true)
    // what a client needs is never taken away
    for (const t of answersA) expect(t).toMatchObject({ access_token: 'at', refresh_token: 'rt' })
    expect(new Set(logged).size).toBe(logged.length)
    expect(logged.length).toBe(Object.keys(a.drawn()).length)
    expect(Object.values(a.drawn()).reduce((s, n) => s + n, 0)).toBeGreaterThan(logged.length)
  })

  it('answers an expired access token with a bare 401 (no REASON), and revocation still with TOKEN_REVOKED', async () => {
    const { app, context } = sim('s-2')
    const first = await consentTokens(app)
    expect(first.status).toBe(200)
    context.clock.advance(2 * 3_600_000)
    for (let i = 0; i < 6; i++) {
      const expired = await app.inject({ method: 'GET', url: '/accounts', headers: api(first.body.access_token as string) })
      expect(expired.statusCode).toBe(401)
      expect(expired.body).not.toContain('REASON')
      expect(expired.body).not.toContain('TOKEN_EXPIRED')
    }
    const second = await consentTokens(app)
    await app.inject({ method: 'POST', url: '/__admin/revoke', payload: { consentId: second.consentId } })
    const revoked = await app.inject({ method: 'GET', url: '/accounts', headers: api(second.body.access_token as string) })
    expect(revoked.statusCode).toBe(401)
    expect(revoked.json()).toMatchObject({ errors: [{ parameters: { REASON: 'TOKEN_REVOKED' } }] })
    const stats = (await app.inject({ method: 'GET', url: '/__admin/stats' })).json<{ contractDrift: { drawn: Record<string, number> } }>()
    expect(Object.keys(stats.contractDrift.drawn).filter((k) => k.startsWith('401.token-expired='))).not.toEqual([])
    await app.close()
  })

  it('serves POST /payments/ or POST /payments as drawn, the other spelling is 404 no operation', async () => {
    const seeds = Array.from({ length: 20 }, (_, i) => `p-${i}`)
    const bySpelling = new Map(seeds.map((s) => [new ContractDriftMode(s).paymentsPath, s]))
    expect([...bySpelling.keys()].sort()).toEqual(['/payments', '/payments/'])
    for (const [served, seed] of bySpelling) {
      const { app } = sim(seed)
      const { body } = await consentTokens(app, 'PISP')
      const other = served === '/payments/' ? '/payments' : '/payments/'
      const refused = await app.inject({ method: 'POST', url: other, headers: api(body.access_token as string), payload: {} })
      expect(refused.statusCode).toBe(404)
      expect(refused.json()).toMatchObject({ errors: [{ error: 'NOT_FOUND', message: `no operation POST ${other}` }] })
      // the served spelling reaches the payment rules (an empty body is refused by them, not 404)
      const reached = await app.inject({ method: 'POST', url: served, headers: api(body.access_token as string), payload: {} })
      expect(reached.statusCode).toBe(400)
      await app.close()
    }
  })

  it('is off by default: modelled token answers and reasons, POST /payments is 404', async () => {
    const { app, context } = sim(undefined)
    const { body } = await consentTokens(app)
    expect(body).toMatchObject({ expires_in: 3600, scope: 'AISP', token_type: 'Bearer' })
    context.clock.advance(2 * 3_600_000)
    const expired = await app.inject({ method: 'GET', url: '/accounts', headers: api(body.access_token as string) })
    expect(expired.json()).toMatchObject({ errors: [{ parameters: { REASON: 'TOKEN_EXPIRED' } }] })
    expect((await app.inject({ method: 'GET', url: '/__admin/stats' })).json()).toMatchObject({ contractDrift: null })
    await app.close()
  })
})
