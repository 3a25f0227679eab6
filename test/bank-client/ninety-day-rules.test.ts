import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BankConsentRevokedError,
  BankHistoryRequiresFreshTokenError,
  bankToday,
  type TokenSet,
} from '@tep/bank-client'
import { startHarness, type Harness, type SimAccount } from './support/sim-harness.ts'

// The simulator's clock only moves forward, so each test gets its own simulator.
let h: Harness
let account: SimAccount
beforeAll(async () => {
  h = await startHarness()
  account = (await h.accountsOf('user1')).find((a) => a.currency === 'CZK' && a.kind === 'CURRENT')!
})
afterAll(() => h.close())

/** The bank date `days` before the bank's today. */
function daysBack(days: number): string {
  const d = new Date(`${bankToday(h.now())}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() - days)
  return d.toISOString().slice(0, 10)
}

describe('the 90-day rules', () => {
  let tokens: TokenSet

  it('allows dateFrom older than 90 days right after the consent (fresh token)', async () => {
    tokens = await h.consent('user1', 'AISP')
    const page = await h.bank.accounts.getTransactionsPage(
      account.id,
      { dateFrom: daysBack(200), pageSize: 10 },
      { accessToken: tokens.accessToken },
    )
    expect(page.totalCount).toBeGreaterThan(0)
    const oldest = await h.bank.accounts.getTransactionsPage(
      account.id,
      { dateFrom: daysBack(200), pageSize: 10, page: page.pageCount - 1 },
      { accessToken: tokens.accessToken },
    )
    expect(oldest.items.at(-1)!.bookingDate!.date! < daysBack(90)).toBe(true)
  })

  it('refuses it with HISTORY_REQUIRES_FRESH_TOKEN after a refresh, while 90 days still work and the consent stays valid', async () => {
    const refreshed = await h.bank.authorization.refresh(tokens.refreshToken, {
      scope: 'AISP',
      refreshTokenExpiresAt: tokens.refreshTokenExpiresAt,
    })
    const call = { accessToken: refreshed.accessToken }
    const err = await h.bank.accounts
      .getTransactionsPage(account.id, { dateFrom: daysBack(91), pageSize: 10 }, call)
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BankHistoryRequiresFreshTokenError)
    expect(err).not.toBeInstanceOf(BankConsentRevokedError)
    expect(err).toMatchObject({
      code: 'HISTORY_REQUIRES_FRESH_TOKEN',
      status: 401,
      dateFrom: daysBack(91),
      reason: 'SCA_REQUIRED',
    })
    // the iterator reports the same typed error
    const iterate = async () => {
      for await (const _ of h.bank.accounts.transactions(account.id, { dateFrom: daysBack(120) }, call))
        void _
    }
    await expect(iterate()).rejects.toBeInstanceOf(BankHistoryRequiresFreshTokenError)
    // exactly 90 days back needs no fresh token, and the consent is intact
    const ok = await h.bank.accounts.getTransactionsPage(
      account.id,
      { dateFrom: daysBack(90), pageSize: 10 },
      call,
    )
    expect(ok.totalCount).toBeGreaterThan(0)
    tokens = refreshed
  })

  it('refuses it also with a code-exchange token once it is no longer fresh', async () => {
    const fresh = await h.consent('user1', 'AISP')
    await h.advanceClock('16m')
    await expect(
      h.bank.accounts.getTransactionsPage(
        account.id,
        { dateFrom: daysBack(100) },
        { accessToken: fresh.accessToken },
      ),
    ).rejects.toBeInstanceOf(BankHistoryRequiresFreshTokenError)
  })

  it('ends the accounts consent 90 days after it was granted: refresh and API calls say CONSENT_REVOKED', async () => {
    const aisp = await h.consent('user2', 'AISP')
    const pisp = await h.consent('user2', 'PISP')
    const cisp = await h.consent('user2', 'CISP')
    expect(pisp.refreshTokenExpiresAt).toBeNull()
    expect(cisp.refreshTokenExpiresAt).toBeNull()

    // one day before the end, refreshing still works (and keeps the end)
    await h.advanceClock('89d')
    const late = await h.bank.authorization.refresh(aisp.refreshToken, {
      scope: 'AISP',
      refreshTokenExpiresAt: aisp.refreshTokenExpiresAt,
    })
    expect(late.refreshTokenExpiresAt?.getTime()).toBe(aisp.refreshTokenExpiresAt?.getTime())
    await h.bank.accounts.listAccounts({ accessToken: late.accessToken })

    await h.advanceClock('1d')
    const refreshErr = await h.bank.authorization
      .refresh(late.refreshToken, { scope: 'AISP' })
      .catch((e: unknown) => e)
    expect(refreshErr).toBeInstanceOf(BankConsentRevokedError)
    expect(refreshErr).toMatchObject({ status: 401, details: { oauthError: 'invalid_grant' } })
    const apiErr = await h.bank.accounts
      .listAccounts({ accessToken: late.accessToken })
      .catch((e: unknown) => e)
    expect(apiErr).toBeInstanceOf(BankConsentRevokedError)

    // payments and cards consents do not expire
    const p = await h.bank.authorization.refresh(pisp.refreshToken, { scope: 'PISP' })
    const c = await h.bank.authorization.refresh(cisp.refreshToken, { scope: 'CISP' })
    expect(p.refreshTokenExpiresAt).toBeNull()
    expect(c.refreshTokenExpiresAt).toBeNull()
  })
})
