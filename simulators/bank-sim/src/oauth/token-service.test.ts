import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { TokenService } from './token-service.ts'
import { SimClock } from '../core/sim-clock.ts'
import { BankApiError, OAuthError } from '../errors.ts'

function setup() {
  let wall = Date.parse('2026-11-22T10:00:00Z')
  const clock = new SimClock({ wallClock: () => wall })
  const tokens = new TokenService(clock)
  const tick = (ms: number) => {
    wall += ms
  }
  const consentFor = (scope: 'AISP' | 'PISP' | 'CISP') => {
    const { code } = tokens.grant({ clientId: 'app', userId: 'u1', scope, accountIds: ['A'], redirectUri: 'http://127.0.0.1/cb' })
    return tokens.exchangeCode({ code, clientId: 'app', redirectUri: 'http://127.0.0.1/cb' })
  }
  return { clock, tokens, tick, consentFor }
}

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (err) {
    if (err instanceof BankApiError) return err.items[0]?.parameters?.REASON ?? undefined
    if (err instanceof OAuthError) return err.error
    throw err
  }
  return undefined
}

describe('token rules', () => {
  it('verifies PKCE S256: a code bound to a challenge needs the matching code_verifier', () => {
    const { tokens } = setup()
    const verifier = 'v'.repeat(43)
    const challenge = createHash('sha256').update(verifier, 'ascii').digest('base64url')
    const grant = () => tokens.grant({ clientId: 'app', userId: 'u1', scope: 'AISP', accountIds: ['A'], redirectUri: undefined, codeChallenge: challenge })
    const a = grant()
    expect(reasonOf(() => tokens.exchangeCode({ code: a.code, clientId: 'app', redirectUri: undefined }))).toBe('invalid_grant')
    expect(reasonOf(() => tokens.exchangeCode({ code: a.code, clientId: 'app', redirectUri: undefined, codeVerifier: 'w'.repeat(43) }))).toBe('invalid_grant')
    expect(tokens.exchangeCode({ code: a.code, clientId: 'app', redirectUri: undefined, codeVerifier: verifier }).access_token).toEqual(expect.any(String))
    // A verifier for a code that had no challenge is a client bug: refused too.
    const plain = tokens.grant({ clientId: 'app', userId: 'u1', scope: 'AISP', accountIds: ['A'], redirectUri: undefined })
    expect(reasonOf(() => tokens.exchangeCode({ code: plain.code, clientId: 'app', redirectUri: undefined, codeVerifier: verifier }))).toBe('invalid_grant')
  })

  it('uses each authorization code once, within 60 s, with the same redirect URI, and revokes what a reused code issued', () => {
    const { tokens, tick } = setup()
    const a = tokens.grant({ clientId: 'app', userId: 'u1', scope: 'AISP', accountIds: [], redirectUri: 'http://x/cb' })
    expect(reasonOf(() => tokens.exchangeCode({ code: a.code, clientId: 'app', redirectUri: 'http://x/other' }))).toBe('invalid_grant')
    const issued = tokens.exchangeCode({ code: a.code, clientId: 'app', redirectUri: 'http://x/cb' })
    expect(tokens.authenticate(issued.access_token).fresh).toBe(true)
    expect(reasonOf(() => tokens.exchangeCode({ code: a.code, clientId: 'app', redirectUri: 'http://x/cb' }))).toBe('invalid_grant')
    expect(reasonOf(() => tokens.authenticate(issued.access_token))).toBe('TOKEN_REVOKED')

    const b = tokens.grant({ clientId: 'app', userId: 'u1', scope: 'AISP', accountIds: [], redirectUri: undefined })
    tick(60_001)
    expect(reasonOf(() => tokens.exchangeCode({ code: b.code, clientId: 'app', redirectUri: undefined }))).toBe('invalid_grant')
  })

  it('expires access tokens after 3600 s and calls a token fresh only for 15 minutes after the code exchange', () => {
    const { tokens, tick, consentFor } = setup()
    const t = consentFor('AISP')
    expect(t.expires_in).toBe(3600)
    tick(15 * 60_000 - 1)
    expect(tokens.authenticate(t.access_token).fresh).toBe(true)
    tick(1)
    expect(tokens.authenticate(t.access_token).fresh).toBe(false)
    tick(3600_000)
    expect(reasonOf(() => tokens.authenticate(t.access_token))).toBe('TOKEN_EXPIRED')
    const r = tokens.refresh({ refreshToken: t.refresh_token, clientId: 'app' })
    expect(tokens.authenticate(r.access_token).fresh).toBe(false)
  })

  it('rotates the refresh token, keeps the old one for a 60 s grace that ends when the new pair is used', () => {
    const { tokens, tick, consentFor } = setup()
    const t = consentFor('PISP')
    const r1 = tokens.refresh({ refreshToken: t.refresh_token, clientId: 'app' })
    expect(r1.refresh_token).not.toBe(t.refresh_token)
    // A client that crashed before persisting r1 can still use the old token within the grace.
    const r2 = tokens.refresh({ refreshToken: t.refresh_token, clientId: 'app' })
    expect(reasonOf(() => tokens.refresh({ refreshToken: r1.refresh_token, clientId: 'app' }))).toBe('invalid_grant')
    tokens.authenticate(r2.access_token)
    expect(reasonOf(() => tokens.refresh({ refreshToken: t.refresh_token, clientId: 'app' }))).toBe('invalid_grant')
    const r3 = tokens.refresh({ refreshToken: r2.refresh_token, clientId: 'app' })
    tick(60_001)
    expect(reasonOf(() => tokens.refresh({ refreshToken: r2.refresh_token, clientId: 'app' }))).toBe('invalid_grant')
    expect(tokens.refresh({ refreshToken: r3.refresh_token, clientId: 'app' }).scope).toBe('PISP')
  })

  it('ends AISP consents 90 days after the grant, also for refreshed tokens, but never CISP or PISP ones', () => {
    const { tokens, tick, consentFor } = setup()
    const aisp = consentFor('AISP')
    const cisp = consentFor('CISP')
    const pisp = consentFor('PISP')
    expect(aisp.refresh_token_expires_in).toBe(90 * 86_400)
    expect(cisp.refresh_token_expires_in).toBeUndefined()
    tick(90 * 86_400_000 - 1000)
    const late = tokens.refresh({ refreshToken: aisp.refresh_token, clientId: 'app' })
    expect(late.refresh_token_expires_in).toBe(1)
    tick(1000)
    expect(reasonOf(() => tokens.authenticate(late.access_token))).toBe('CONSENT_EXPIRED')
    expect(reasonOf(() => tokens.refresh({ refreshToken: late.refresh_token, clientId: 'app' }))).toBe('invalid_grant')
    tick(400 * 86_400_000)
    for (const t of [cisp, pisp]) {
      const r = tokens.refresh({ refreshToken: t.refresh_token, clientId: 'app' })
      expect(tokens.authenticate(r.access_token).consent.scope).toBe(t.scope)
    }
  })

  it('answers 401 TOKEN_REVOKED after revocation and refuses the refresh', () => {
    const { tokens, consentFor } = setup()
    const t = consentFor('CISP')
    tokens.revokeConsent(t.consent_id)
    expect(reasonOf(() => tokens.authenticate(t.access_token))).toBe('TOKEN_REVOKED')
    expect(reasonOf(() => tokens.refresh({ refreshToken: t.refresh_token, clientId: 'app' }))).toBe('invalid_grant')
    expect(reasonOf(() => tokens.authenticate('nope'))).toBe('TOKEN_UNKNOWN')
    expect(reasonOf(() => tokens.authenticate(undefined))).toBe('TOKEN_MISSING')
  })
})
