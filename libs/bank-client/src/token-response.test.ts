import { afterEach, describe, expect, it } from 'vitest'
import { BankProtocolError } from './errors.ts'
import { startFakeBank, type FakeBank } from './fake-bank.test-support.ts'
import { DEFAULT_ACCESS_TOKEN_LIFETIME_MS } from './token-response.ts'

const NOW = Date.parse('2026-03-02T09:00:00Z')
let bank: FakeBank | undefined
afterEach(async () => {
  await bank?.close()
  bank = undefined
})

/** A bank whose token endpoint answers `body`. */
async function tokenAnswer(body: unknown, status = 200): Promise<FakeBank> {
  bank = await startFakeBank(() => ({ status, body }))
  return bank
}

const pair = { access_token: 'at-1', refresh_token: 'rt-1', token_type: 'Bearer' }

describe('token answers the description leaves open are read leniently', () => {
  it('a code exchange without expires_in gets the default lifetime (refresh early), reported as drift', async () => {
    const b = await tokenAnswer({ ...pair, scope: 'AISP' })
    const tokens = await b.client.authorization.exchangeCode('code', { scope: 'AISP' })
    expect(tokens.accessToken).toBe('at-1')
    expect(tokens.refreshToken).toBe('rt-1')
    expect(tokens.accessTokenExpiresAt.getTime()).toBe(NOW + DEFAULT_ACCESS_TOKEN_LIFETIME_MS)
    // the accounts consent's 90 days still start at the grant
    expect(tokens.refreshTokenExpiresAt?.getTime()).toBe(NOW + 90 * 86_400_000)
    expect(b.drifts).toEqual([
      { api: 'bank', operation: 'bank.oauth.exchangeCode', field: 'expires_in', kind: 'absent' },
    ])
  })

  it('expires_in as a string holding a number is that number; any other string is the default', async () => {
    const b = await tokenAnswer({ ...pair, expires_in: '1800', refresh_token_expires_in: '600' })
    const tokens = await b.client.authorization.refresh('rt-0', { scope: 'AISP' })
    expect(tokens.accessTokenExpiresAt.getTime()).toBe(NOW + 1_800_000)
    expect(tokens.refreshTokenExpiresAt?.getTime()).toBe(NOW + 600_000)
    expect(b.drifts.map((d) => `${d.field} ${d.kind}`)).toEqual([
      'expires_in type',
      'refresh_token_expires_in type',
    ])
    await b.close()

    const odd = await tokenAnswer({ ...pair, expires_in: 'one hour' })
    const t2 = await odd.client.authorization.refresh('rt-0', { scope: 'PISP' })
    expect(t2.accessTokenExpiresAt.getTime()).toBe(NOW + DEFAULT_ACCESS_TOKEN_LIFETIME_MS)
    expect(odd.drifts.map((d) => `${d.field} ${d.kind}`)).toEqual(['expires_in type'])
  })

  it('honours a caller-chosen default lifetime', async () => {
    bank = await startFakeBank(() => ({ status: 200, body: pair }), { defaultAccessTokenLifetimeMs: 42_000 })
    const tokens = await bank.client.authorization.refresh('rt-0', { scope: 'PISP' })
    expect(tokens.accessTokenExpiresAt.getTime()).toBe(NOW + 42_000)
  })

  it.each([
    ['AISP offline_access', 'superset'],
    ['openid AISP', 'superset-reordered'],
  ])('accepts a granted scope %j that holds the one asked for (%s)', async (scope, kind) => {
    const b = await tokenAnswer({ ...pair, expires_in: 3600, scope })
    const tokens = await b.client.authorization.exchangeCode('code', { scope: 'AISP' })
    expect(tokens.scope).toBe('AISP')
    expect(tokens.accessTokenExpiresAt.getTime()).toBe(NOW + 3_600_000)
    expect(b.drifts).toEqual([{ api: 'bank', operation: 'bank.oauth.exchangeCode', field: 'scope', kind }])
  })

  it('ignores unknown fields and reads a numeric consent_id, each reported', async () => {
    const b = await tokenAnswer({
      ...pair,
      expires_in: 3600,
      consent_id: 77,
      'not-before-policy': 0,
      session_state: 'x',
    })
    const tokens = await b.client.authorization.exchangeCode('code', { scope: 'AISP' })
    expect(tokens.consentId).toBe('77')
    expect(b.drifts.map((d) => `${d.field} ${d.kind}`)).toEqual([
      'consent_id type',
      'not-before-policy unknown-field',
      'session_state unknown-field',
    ])
  })

  it('keeps the old refresh token when a refresh answers none (RFC 6749 §6), reported', async () => {
    const b = await tokenAnswer({ access_token: 'at-2', expires_in: 60 })
    const tokens = await b.client.authorization.refresh('rt-old', { scope: 'PISP' })
    expect(tokens.refreshToken).toBe('rt-old')
    expect(b.drifts.map((d) => `${d.field} ${d.kind}`)).toEqual(['refresh_token absent'])
  })

  it.each([
    [{ refresh_token: 'rt', expires_in: 60 }, 'access_token', /lacks access_token/],
    [{ access_token: 7, refresh_token: 'rt' }, 'access_token', /access_token that is a number/],
    [{ access_token: 'at', expires_in: 60 }, 'refresh_token', /code exchange lacks refresh_token/],
    [{ ...pair, scope: 'PISP' }, 'scope', /grants scope "PISP", not the AISP asked for/],
    [['at'], '(body)', /is a JSON array/],
  ])('refuses an answer that lacks what is needed, naming the field: %j', async (body, field, message) => {
    const b = await tokenAnswer(body)
    const err = await b.client.authorization.exchangeCode('code', { scope: 'AISP' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BankProtocolError)
    expect(err).toMatchObject({ code: 'BANK_PROTOCOL_ERROR', details: { field } })
    expect((err as Error).message).toMatch(message)
  })
})
