import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BankAccessTokenExpiredError,
  BankConsentRevokedError,
  BankOAuthError,
  generateState,
} from '@tep/bank-client'
import { SIM_START, startHarness, type Harness } from './support/sim-harness.ts'

let h: Harness
beforeAll(async () => {
  h = await startHarness()
})
afterAll(() => h.close())

describe('authorization: code exchange, rotation, revocation', () => {
  it('builds an authorize URL the simulator accepts (login page) for each scope', async () => {
    for (const scope of ['AISP', 'PISP', 'CISP'] as const) {
      const url = h.bank.authorization.buildAuthorizationUrl({ scope, state: generateState() })
      const res = await fetch(url)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/text\/html/)
    }
  })

  it('exchanges a code for a token set with expiry instants computed from the bank clock', async () => {
    const tokens = await h.consent('user1', 'AISP')
    expect(tokens).toMatchObject({ scope: 'AISP', tokenType: 'Bearer', grant: 'authorization_code' })
    expect(tokens.accessTokenExpiresAt.getTime()).toBe(SIM_START + 3_600_000)
    expect(tokens.refreshTokenExpiresAt?.getTime()).toBe(SIM_START + 90 * 86_400_000)
    expect(tokens.consentId).toMatch(/^cns-/)
    expect((await h.bank.accounts.listAccounts({ accessToken: tokens.accessToken })).length).toBeGreaterThan(
      0,
    )
  })

  it('refuses a second use of the same code with an OAuth error (not a revoked consent)', async () => {
    const { code } = await h.grant('user1', 'AISP')
    await h.bank.authorization.exchangeCode(code, { scope: 'AISP' })
    const err = await h.bank.authorization.exchangeCode(code, { scope: 'AISP' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BankOAuthError)
    expect(err).toMatchObject({ code: 'BANK_OAUTH_ERROR', oauthError: 'invalid_grant', status: 401 })
  })

  it('refuses a wrong client secret as BANK_CLIENT_REJECTED', async () => {
    const { code } = await h.grant('user1', 'AISP')
    const wrong = h.client({ clientSecret: 'not-the-secret' })
    await expect(wrong.authorization.exchangeCode(code, { scope: 'AISP' })).rejects.toMatchObject({
      code: 'BANK_CLIENT_REJECTED',
      oauthError: 'invalid_client',
    })
  })

  it('rotates the refresh token; the rotated-out one dies once the new pair is used', async () => {
    const first = await h.consent('user2', 'AISP')
    const second = await h.bank.authorization.refresh(first.refreshToken, {
      scope: 'AISP',
      refreshTokenExpiresAt: first.refreshTokenExpiresAt,
    })
    expect(second.refreshToken).not.toBe(first.refreshToken)
    expect(second.accessToken).not.toBe(first.accessToken)
    expect(second.grant).toBe('refresh_token')
    // the consent's 90-day end does not move with a refresh
    expect(second.refreshTokenExpiresAt?.getTime()).toBe(first.refreshTokenExpiresAt?.getTime())

    // using the new access token ends the old refresh token's grace
    await h.bank.accounts.listAccounts({ accessToken: second.accessToken })
    await expect(h.bank.authorization.refresh(first.refreshToken, { scope: 'AISP' })).rejects.toBeInstanceOf(
      BankConsentRevokedError,
    )
    // the new one still works and rotates again
    const third = await h.bank.authorization.refresh(second.refreshToken, { scope: 'AISP' })
    expect(third.refreshToken).not.toBe(second.refreshToken)
  })

  it('reports an expired access token as ACCESS_TOKEN_EXPIRED, and a refresh fixes it', async () => {
    const tokens = await h.consent('user3', 'AISP')
    await h.advanceClock('61m')
    const err = await h.bank.accounts
      .listAccounts({ accessToken: tokens.accessToken })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BankAccessTokenExpiredError)
    expect(err).not.toBeInstanceOf(BankConsentRevokedError)
    const fresh = await h.bank.authorization.refresh(tokens.refreshToken, { scope: 'AISP' })
    expect((await h.bank.accounts.listAccounts({ accessToken: fresh.accessToken })).length).toBeGreaterThan(0)
  })

  it('turns a revoked consent into CONSENT_REVOKED on API calls and on refresh, with the request id', async () => {
    const tokens = await h.consent('user1', 'PISP')
    await h.admin('POST', '/__admin/revoke', { consentId: tokens.consentId })
    const err = await h.bank.payments
      .getPaymentStatus('PMT-none', { accessToken: tokens.accessToken, requestId: 'req-revoked-1' })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BankConsentRevokedError)
    expect(err).toMatchObject({
      code: 'CONSENT_REVOKED',
      status: 401,
      requestId: 'req-revoked-1',
      reason: 'TOKEN_REVOKED',
    })
    expect((err as Error).message).toContain('req-revoked-1')
    await expect(h.bank.authorization.refresh(tokens.refreshToken, { scope: 'PISP' })).rejects.toMatchObject({
      code: 'CONSENT_REVOKED',
    })
  })

  it('accepts an access-token provider per client and per call', async () => {
    const tokens = await h.consent('user2', 'AISP')
    let asked = 0
    const withProvider = h.client({
      accessToken: async () => {
        asked++
        return tokens.accessToken
      },
    })
    await withProvider.accounts.listAccounts()
    expect(asked).toBe(1)
    // a per-call token overrides the client's provider; an unknown token does not say the
    // consent ended (refresh and call again), so it is not CONSENT_REVOKED
    await expect(withProvider.accounts.listAccounts({ accessToken: 'not-a-token' })).rejects.toMatchObject({
      code: 'UNAUTHORIZED_UNEXPLAINED',
      reason: 'TOKEN_UNKNOWN',
    })
    expect(asked).toBe(1)
  })
})
