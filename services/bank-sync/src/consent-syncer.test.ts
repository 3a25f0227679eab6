import { randomBytes } from 'node:crypto'
import {
  BankAccessTokenExpiredError,
  BankConsentRevokedError,
  BankHistoryRequiresFreshTokenError,
  BankUnavailableError,
  type BankClient,
  type CallOptions,
  type Page,
  type TokenSet,
  type Transaction,
} from '@tep/bank-client'
import { exampleConsent, type Consent } from '@tep/schemas'
import { createKeyring, TokenCipher } from '@tep/token-cipher'
import { describe, expect, it } from 'vitest'
import { syncConsent } from './consent-syncer.ts'
import { DEFAULT_SYNC_SETTINGS, type SyncWrite } from './sync-deps.ts'
import { consentBinding } from './consent-binding.ts'
import { DAY, NOW, SYNCING_CONSENT_DATES, syncDeps } from './consent-syncer.test-support.ts'
import { addDays } from './sync-window.ts'

const TODAY = '2026-05-04'

interface Fake {
  bank: BankClient
  calls: string[]
  dateFroms: string[]
}

/** An account with no transactions: one empty page, the call noted. */
const emptyPages = (calls: string[]) => (_accountId: string, _query: { dateFrom: string }, call: CallOptions) => {
  calls.push(`transactions:${String(call.accessToken)}`)
  return (async function* (): AsyncGenerator<Page<Transaction>> {
    yield { pageNumber: 0, pageCount: 1, pageSize: 100, items: [] }
  })()
}

/** The bank's refusal of a refresh token it rotated out (the simulator's, after its grace). */
const rotatedOut = () =>
  new BankConsentRevokedError('invalid_grant: refresh token was rotated out', {
    operation: 'bank.oauth.refresh',
    status: 401,
    requestId: 'r',
    details: { oauthError: 'invalid_grant' },
  })

/** The bank's answer to a refresh: a new pair, the access token for an hour, the refresh token for `refreshDays`. */
function refreshedTokens(accessToken: string, refreshToken: string, refreshDays: number): TokenSet {
  return {
    accessToken,
    refreshToken,
    tokenType: 'Bearer',
    scope: 'AISP',
    accessTokenExpiresAt: new Date(NOW + 3_600_000),
    refreshTokenExpiresAt: new Date(NOW + refreshDays * DAY),
    obtainedAt: new Date(NOW),
    grant: 'refresh_token',
    consentId: undefined,
  }
}

function fakeBank(options: {
  items?: Transaction[]
  refuseHistoryBefore?: string
  /** `everything`: a refused refresh, and a 401 without reason for the access token too. */
  revokeOn?: 'refresh' | 'accounts' | 'everything'
}): Fake {
  const calls: string[] = []
  const dateFroms: string[] = []
  const token = (call: CallOptions) => String(call.accessToken)
  const bank = {
    authorization: {
      refresh: async (refreshToken: string): Promise<TokenSet> => {
        calls.push(`refresh:${refreshToken}`)
        if (options.revokeOn === 'refresh' || options.revokeOn === 'everything') {
          throw new BankConsentRevokedError('revoked', { operation: 'refresh', status: 401, requestId: 'r' })
        }
        return refreshedTokens('access-2', 'refresh-2', 80)
      },
    },
    accounts: {
      listAccounts: async (call: CallOptions) => {
        calls.push(`accounts:${token(call)}`)
        if (options.revokeOn === 'accounts' || options.revokeOn === 'everything') {
          throw new BankConsentRevokedError('revoked', { operation: 'accounts', status: 401, requestId: 'r' })
        }
        return [{ id: 'acc-1', currency: 'CZK', identification: { iban: 'CZ00' } }]
      },
      transactionPages: (accountId: string, query: { dateFrom: string }, call: CallOptions) => {
        calls.push(`transactions:${token(call)}`)
        dateFroms.push(query.dateFrom)
        return (async function* (): AsyncGenerator<Page<Transaction>> {
          if (options.refuseHistoryBefore !== undefined && query.dateFrom < options.refuseHistoryBefore) {
            throw new BankHistoryRequiresFreshTokenError('fresh token needed', {
              operation: 'transactions',
              status: 401,
              requestId: 'r',
              dateFrom: query.dateFrom,
            })
          }
          const items = options.items ?? []
          yield { pageNumber: 0, pageCount: 1, pageSize: 100, items }
        })()
      },
    },
  } as unknown as BankClient
  return { bank, calls, dateFroms }
}

function setup(consentOverrides: Partial<Consent>, fake: Fake) {
  const cipher = new TokenCipher(createKeyring([{ id: 't', key: randomBytes(32) }]))
  const base = exampleConsent()
  const consent: Consent = {
    ...base,
    accessToken: cipher.encrypt('access-1', consentBinding(base)),
    refreshToken: cipher.encrypt('refresh-1', consentBinding(base)),
    ...SYNCING_CONSENT_DATES,
    ...consentOverrides,
  }
  const { deps, writes } = syncDeps(fake.bank, cipher, consent, (w) => fake.calls.push(`commit:${w.reason}`))
  return { consent, deps, writes, cipher }
}

const booked = (ref: string, date: string): Transaction => ({
  entryReference: ref,
  amount: { value: 10, currency: 'CZK' },
  creditDebitIndicator: 'DBIT',
  status: 'BOOK',
  bookingDate: { date },
})

describe('syncConsent', () => {
  it('commits a rotated token pair BEFORE using the new access token', async () => {
    const fake = fakeBank({ items: [booked('A', TODAY)] })
    const { consent, deps, writes, cipher } = setup({ accessTokenExpiresAt: NOW + 30_000 }, fake)
    const outcome = await syncConsent(consent, deps)
    expect(outcome).toMatchObject({ kind: 'synced', added: 1, raw: 1 })
    expect(fake.calls).toEqual([
      'refresh:refresh-1',
      'commit:TOKEN_REFRESH',
      'accounts:access-2',
      'transactions:access-2',
      'commit:SYNC',
    ])
    const sealed = writes[0]?.consent
    expect(sealed?.refreshToken).not.toContain('refresh-2')
    expect(cipher.decrypt(sealed?.refreshToken as string, consentBinding(consent))).toBe('refresh-2')
    expect(writes[1]?.rawTransactions).toHaveLength(1)
    expect(writes[1]?.consent.accounts[0]?.lastBookingDate).toBe(TODAY)
  })

  it('backfills beyond 90 days on the first sync with a fresh token, and falls back to 89 days when refused', async () => {
    const fake = fakeBank({ items: [booked('A', TODAY)], refuseHistoryBefore: addDays(TODAY, -89) })
    const { consent, deps } = setup({ grantedAt: NOW - 60_000, tokenIssuedAt: NOW - 60_000 }, fake)
    const outcome = await syncConsent(consent, deps)
    expect(outcome.kind).toBe('synced')
    expect(fake.dateFroms).toEqual([addDays(TODAY, -365), addDays(TODAY, -89)])
  })

  it('never asks for old history with a token that is not fresh', async () => {
    const fake = fakeBank({ items: [] })
    const { consent, deps } = setup({}, fake)
    await syncConsent(consent, deps)
    expect(fake.dateFroms).toEqual([addDays(TODAY, -89)])
  })

  it('a 401 revocation writes REVOKED without tokens and stops', async () => {
    const fake = fakeBank({ revokeOn: 'accounts' })
    const { consent, deps, writes } = setup({}, fake)
    expect(await syncConsent(consent, deps)).toEqual({ kind: 'stopped', status: 'REVOKED' })
    expect(
      writes.map((w) => [w.reason, w.consent.status, w.consent.accessToken, w.consent.refreshToken]),
    ).toEqual([['REVOKED', 'REVOKED', null, null]])
  })

  it('a refused refresh also revokes when the bank refuses the access token too', async () => {
    const fake = fakeBank({ revokeOn: 'everything' })
    const { consent, deps, writes } = setup({ accessTokenExpiresAt: NOW }, fake)
    expect(await syncConsent(consent, deps)).toEqual({ kind: 'stopped', status: 'REVOKED' })
    expect(writes.map((w) => w.reason)).toEqual(['REVOKED'])
  })

  it('a refused refresh of a consent the bank still serves pauses it and keeps it (a rotated-out refresh token)', async () => {
    const fake = fakeBank({ revokeOn: 'refresh' })
    const { consent, deps, writes } = setup({ accessTokenExpiresAt: NOW }, fake)
    expect(await syncConsent(consent, deps)).toMatchObject({ kind: 'backoff', code: 'REFRESH_TOKEN_REFUSED' })
    expect(fake.calls).toEqual(['refresh:refresh-1', 'accounts:access-1'])
    expect(writes).toEqual([])
  })

  it('announces EXPIRING once inside the warning window and keeps syncing; EXPIRED after the end, without calling the bank', async () => {
    const fake = fakeBank({ items: [] })
    const { consent, deps, writes } = setup({ expiresAt: NOW + 3 * DAY }, fake)
    expect((await syncConsent(consent, deps)).kind).toBe('synced')
    expect(writes.map((w) => [w.reason, w.consent.status])).toEqual([
      ['EXPIRING', 'EXPIRING'],
      ['SYNC', 'EXPIRING'],
    ])
    const again = await syncConsent({ ...(writes[1]?.consent as Consent) }, deps)
    expect(again.kind).toBe('synced')
    expect(writes.filter((w) => w.reason === 'EXPIRING')).toHaveLength(1)

    const late = fakeBank({ items: [] })
    const expired = setup({ expiresAt: NOW - 1 }, late)
    expect(await syncConsent(expired.consent, expired.deps)).toEqual({ kind: 'stopped', status: 'EXPIRED' })
    expect(late.calls).toEqual(['commit:EXPIRED'])
  })

  it('skips a malformed bank entry with a metric and goes on syncing the others', async () => {
    const unreadable = { ...booked('BAD', TODAY), amount: { value: 'twelve', currency: 'CZK' } } as unknown as Transaction
    const oversized = {
      ...booked('HUGE', TODAY),
      remittanceInformation: { unstructured: 'X'.repeat(20_000) },
      amount: { value: 10, currency: 'ZZZ' },
    } as unknown as Transaction
    const fake = fakeBank({ items: [booked('A', TODAY), unreadable, oversized, booked('B', TODAY)] })
    const { consent, deps, writes } = setup({}, fake)
    const outcome = await syncConsent(consent, deps)
    expect(outcome).toMatchObject({ kind: 'synced', raw: 2 })
    const sync = writes.find((w) => w.reason === 'SYNC')
    expect(sync?.rawTransactions.map((r) => r.sourceReference?.split('/').at(-1)).sort()).toEqual(['A', 'B'])
    // The readable-but-invalid entry is still recorded as the bank's transaction.
    expect(sync?.bankTransactions.map((b) => b.entryReference).sort()).toEqual(['A', 'B', 'HUGE'])
    const counted = await deps.metrics.malformedEntries.get()
    expect(Object.fromEntries(counted.values.map((v) => [v.labels.reason, v.value]))).toEqual({
      UNREADABLE: 1,
      RAW_RULES: 1,
    })
    // Seen, so the next sync does not stumble on them again.
    expect(sync?.consent.accounts[0]?.seenEntries.map((e) => e.entryReference).sort()).toEqual(['A', 'B', 'BAD', 'HUGE'])
  })

  it('re-seals tokens of a rotated-out key with the active key in the sync write', async () => {
    const fake = fakeBank({ items: [booked('A', TODAY)] })
    const oldKey = { id: 'old', key: randomBytes(32) }
    const oldCipher = new TokenCipher(createKeyring([oldKey]))
    const id = exampleConsent().consentId
    const { consent, deps } = setup(
      { accessToken: oldCipher.encrypt('access-1', [id, exampleConsent().customerId]), refreshToken: oldCipher.encrypt('refresh-1', [id, exampleConsent().customerId]) },
      fake,
    )
    const rotated = new TokenCipher(createKeyring([{ id: 'new', key: randomBytes(32) }, oldKey]))
    const outcome = await syncConsent(consent, { ...deps, cipher: rotated })
    expect(outcome.kind).toBe('synced')
    const written = (outcome as { consent: Consent }).consent
    expect(written.accessToken?.split('.')[1]).toBe('new')
    expect(written.refreshToken?.split('.')[1]).toBe('new')
    expect(rotated.decrypt(written.refreshToken as string, consentBinding(consent))).toBe('refresh-1')
  })

  it('does not touch terminal consents', async () => {
    const fake = fakeBank({})
    const { consent, deps } = setup({ status: 'ENDED' }, fake)
    expect((await syncConsent(consent, deps)).kind).toBe('skipped')
    expect(fake.calls).toEqual([])
  })
})

/**
 * A bank that rotates refresh tokens like the real one: after a refresh, only the newest
 * refresh token works (no grace here: the grace ran out while the broker was down).
 */
function rotatingBank(): Fake & { refreshes: () => number } {
  const calls: string[] = []
  let current = 'refresh-1'
  let n = 1
  let refreshes = 0
  const bank = {
    authorization: {
      refresh: async (refreshToken: string): Promise<TokenSet> => {
        calls.push(`refresh:${refreshToken}`)
        if (refreshToken !== current) throw rotatedOut()
        refreshes++
        n++
        current = `refresh-${n}`
        return refreshedTokens(`access-${n}`, current, 60)
      },
    },
    accounts: {
      listAccounts: async (call: CallOptions) => {
        calls.push(`accounts:${String(call.accessToken)}`)
        return [{ id: 'acc-1', currency: 'CZK', identification: { iban: 'CZ00' } }]
      },
      transactionPages: emptyPages(calls),
    },
  } as unknown as BankClient
  return { bank, calls, dateFroms: [], refreshes: () => refreshes }
}

describe('syncConsent during a Kafka outage', () => {
  it('keeps rotated tokens whose write failed, pauses the consent, and writes then uses them next time (no new refresh, never REVOKED)', async () => {
    const fake = rotatingBank()
    const { consent, deps, writes, cipher } = setup({ accessTokenExpiresAt: NOW + 30_000 }, fake)
    let brokerDown = true
    const commit = deps.commit
    deps.commit = async (w: SyncWrite) => {
      if (brokerDown) {
        fake.calls.push(`commit-failed:${w.reason}`)
        throw Object.assign(new Error('broker down'), { name: 'KafkaJSNonRetriableError' })
      }
      return commit(w)
    }

    // The stored consent still holds refresh-1, which the bank no longer accepts once rotated.
    const first = await syncConsent(consent, deps)
    expect(first).toMatchObject({ kind: 'backoff' })
    const second = await syncConsent(consent, deps)
    expect(second).toMatchObject({ kind: 'backoff' })
    expect(fake.refreshes()).toBe(1)
    expect(fake.calls).toEqual([
      'refresh:refresh-1',
      'commit-failed:TOKEN_REFRESH',
      // The second attempt writes the kept pair first and does not refresh again.
      'commit-failed:TOKEN_REFRESH',
    ])

    brokerDown = false
    const third = await syncConsent(consent, deps)
    expect(third).toMatchObject({ kind: 'synced' })
    expect(fake.calls.slice(3)).toEqual([
      'commit:TOKEN_REFRESH',
      'accounts:access-2',
      'transactions:access-2',
      'commit:SYNC',
    ])
    expect(fake.refreshes()).toBe(1)
    expect(writes.map((w) => [w.reason, w.consent.status])).toEqual([
      ['TOKEN_REFRESH', 'ACTIVE'],
      ['SYNC', 'ACTIVE'],
    ])
    expect(cipher.decrypt(writes[0]?.consent.refreshToken as string, consentBinding(consent))).toBe('refresh-2')
    expect(deps.unsavedTokens.size).toBe(0)

    // Later refreshes start from the saved token and keep working.
    const saved = (third as { consent: Consent }).consent
    const fourth = await syncConsent({ ...saved, accessTokenExpiresAt: NOW }, deps)
    expect(fourth.kind).toBe('synced')
    expect(fake.calls).toContain('refresh:refresh-2')
    expect(writes.some((w) => w.consent.status === 'REVOKED')).toBe(false)
  })

  it('drops kept tokens once the stored consent holds other tokens (the failed write landed after all)', async () => {
    const fake = rotatingBank()
    const { consent, deps, cipher } = setup({ accessTokenExpiresAt: NOW + 30_000 }, fake)
    deps.unsavedTokens.set(consent.consentId, {
      basedOn: cipher.encrypt('older', consentBinding(consent)),
      fields: {
        accessToken: cipher.encrypt('access-x', consentBinding(consent)),
        refreshToken: cipher.encrypt('refresh-x', consentBinding(consent)),
        accessTokenExpiresAt: NOW + 3_600_000,
        refreshTokenExpiresAt: NOW + 60 * DAY,
        tokenIssuedAt: NOW,
      },
    })
    expect((await syncConsent(consent, deps)).kind).toBe('synced')
    expect(fake.calls[0]).toBe('refresh:refresh-1')
    expect(deps.unsavedTokens.size).toBe(0)
  })
})

describe('syncConsent: revoked or expired', () => {
  function refusedRefresh(bankDate: string | undefined): BankClient {
    return {
      authorization: {
        refresh: async () => {
          throw new BankConsentRevokedError('invalid_grant', {
            operation: 'bank.oauth.refresh',
            status: 401,
            requestId: 'r',
            details: { oauthError: 'invalid_grant' },
            cause: { headers: bankDate === undefined ? {} : { date: bankDate } },
          })
        },
      },
    } as unknown as BankClient
  }

  it('a refused refresh after the 90 days by the bank clock (Date header) is EXPIRED, even without the warning window', async () => {
    const { consent, deps, writes } = setup({ accessTokenExpiresAt: NOW, status: 'ACTIVE' }, fakeBank({}))
    const bankNow = new Date(NOW + 61 * DAY).toUTCString()
    expect(await syncConsent(consent, { ...deps, bank: refusedRefresh(bankNow) })).toEqual({
      kind: 'stopped',
      status: 'EXPIRED',
    })
    expect(writes.map((w) => [w.reason, w.consent.status, w.consent.statusReason, w.consent.refreshToken])).toEqual([
      ['EXPIRED', 'EXPIRED', 'CONSENT_90_DAYS', null],
    ])
  })

  it('a refused refresh before the end (by both clocks) is REVOKED', async () => {
    const { consent, deps, writes } = setup({ accessTokenExpiresAt: NOW }, fakeBank({}))
    const bankNow = new Date(NOW + 59 * DAY).toUTCString()
    expect(await syncConsent(consent, { ...deps, bank: refusedRefresh(bankNow) })).toEqual({
      kind: 'stopped',
      status: 'REVOKED',
    })
    expect(writes.map((w) => w.reason)).toEqual(['REVOKED'])
    const noDate = setup({ accessTokenExpiresAt: NOW }, fakeBank({}))
    expect(await syncConsent(noDate.consent, { ...noDate.deps, bank: refusedRefresh(undefined) })).toEqual({
      kind: 'stopped',
      status: 'REVOKED',
    })
  })

  it('a refused refresh asks the bank why with one API call: its REASON decides', async () => {
    for (const [reason, status] of [
      ['CONSENT_EXPIRED', 'EXPIRED'],
      ['TOKEN_REVOKED', 'REVOKED'],
    ] as const) {
      const { consent, deps, writes } = setup({ accessTokenExpiresAt: NOW }, fakeBank({}))
      const probed: string[] = []
      const bank = {
        authorization: refusedRefresh(undefined).authorization,
        accounts: {
          listAccounts: async (call: CallOptions) => {
            probed.push(String(call.accessToken))
            throw new BankConsentRevokedError('401', {
              operation: 'bank.accounts.list',
              status: 401,
              requestId: 'r',
              errors: [{ error: 'UNAUTHORISED', parameters: { REASON: reason } }],
            })
          },
        },
      } as unknown as BankClient
      expect(await syncConsent(consent, { ...deps, bank })).toEqual({ kind: 'stopped', status })
      expect(probed).toEqual(['access-1'])
      expect(writes.map((w) => w.reason)).toEqual([status])
    }
  })

  it('an API 401 with REASON CONSENT_EXPIRED is EXPIRED', async () => {
    const { consent, deps, writes } = setup({}, fakeBank({}))
    const bank = {
      accounts: {
        listAccounts: async () => {
          throw new BankConsentRevokedError('401', {
            operation: 'bank.accounts.list',
            status: 401,
            requestId: 'r',
            errors: [{ error: 'UNAUTHORISED', parameters: { REASON: 'CONSENT_EXPIRED' } }],
          })
        },
      },
    } as unknown as BankClient
    expect(await syncConsent(consent, { ...deps, bank })).toEqual({ kind: 'stopped', status: 'EXPIRED' })
    expect(writes.map((w) => w.reason)).toEqual(['EXPIRED'])
  })
})

/**
 * The fault suite's scale-out row: an instance refreshed (the bank rotated the refresh token),
 * could not write the new pair (broker down) and then lost the partition; the next owner reads
 * the rotated-out token from the topic. The bank refuses it, but the consent lives at the bank:
 * that is our credential problem, not the customer's revocation.
 */
describe('syncConsent: the stored refresh token was rotated out by another instance', () => {
  /** The bank as the simulator: refresh-1 was rotated out (refresh-2 went to the other instance). */
  function bankAfterLostRotation(accessTokenAnswer: 'ok' | 'expired' | 'revoked' | 'unavailable'): Fake {
    const calls: string[] = []
    const current = 'refresh-2'
    const bank = {
      authorization: {
        refresh: async (refreshToken: string): Promise<TokenSet> => {
          calls.push(`refresh:${refreshToken}`)
          if (refreshToken !== current) throw rotatedOut()
          return refreshedTokens('access-3', 'refresh-3', 60)
        },
      },
      accounts: {
        listAccounts: async (call: CallOptions) => {
          calls.push(`accounts:${String(call.accessToken)}`)
          const answer = call.accessToken === 'access-1' ? accessTokenAnswer : 'ok'
          const opts = { operation: 'bank.accounts.list', status: 401, requestId: 'r' }
          if (answer === 'expired')
            throw new BankAccessTokenExpiredError('401', {
              ...opts,
              errors: [{ error: 'UNAUTHORISED', parameters: { REASON: 'TOKEN_EXPIRED' } }],
            })
          if (answer === 'revoked')
            throw new BankConsentRevokedError('401', {
              ...opts,
              errors: [{ error: 'UNAUTHORISED', parameters: { REASON: 'TOKEN_REVOKED' } }],
            })
          if (answer === 'unavailable')
            throw new BankUnavailableError('503', { ...opts, status: 503, retriable: true })
          return [{ id: 'acc-1', currency: 'CZK', identification: { iban: 'CZ00' } }]
        },
        transactionPages: emptyPages(calls),
      },
    } as unknown as BankClient
    return { bank, calls, dateFroms: [] }
  }

  it('an expired access token (not "revoked") pauses the consent, and it resumes once the newest tokens are stored', async () => {
    const fake = bankAfterLostRotation('expired')
    const { consent, deps, writes, cipher } = setup({ accessTokenExpiresAt: NOW }, fake)
    const paused = await syncConsent(consent, deps)
    expect(paused).toMatchObject({ kind: 'backoff', code: 'REFRESH_TOKEN_REFUSED' })
    expect(writes).toEqual([])
    const errors = await deps.metrics.apiErrors.get()
    expect(errors.values.find((v) => v.labels.code === 'REFRESH_TOKEN_REFUSED')?.value).toBe(1)

    // The instance that holds refresh-2 writes it (its retry, or before leaving the partition).
    const stored: Consent = {
      ...consent,
      accessToken: cipher.encrypt('access-2', consentBinding(consent)),
      refreshToken: cipher.encrypt('refresh-2', consentBinding(consent)),
    }
    expect(await syncConsent(stored, deps)).toMatchObject({ kind: 'synced' })
    expect(fake.calls.slice(2)).toEqual([
      'refresh:refresh-2',
      'commit:TOKEN_REFRESH',
      'accounts:access-3',
      'transactions:access-3',
      'commit:SYNC',
    ])
    expect(writes.map((w) => [w.reason, w.consent.status])).toEqual([
      ['TOKEN_REFRESH', 'ACTIVE'],
      ['SYNC', 'ACTIVE'],
    ])
  })

  it('a bank that cannot be asked pauses the consent too (an outage never ends it)', async () => {
    const fake = bankAfterLostRotation('unavailable')
    const { consent, deps, writes } = setup({ accessTokenExpiresAt: NOW }, fake)
    expect(await syncConsent(consent, deps)).toMatchObject({ kind: 'backoff', code: 'REFRESH_TOKEN_REFUSED' })
    expect(writes).toEqual([])
  })

  it('still ends the consent when the bank says so: revoked, or past its 90 days', async () => {
    const revoked = setup({ accessTokenExpiresAt: NOW }, bankAfterLostRotation('revoked'))
    expect(await syncConsent(revoked.consent, revoked.deps)).toEqual({ kind: 'stopped', status: 'REVOKED' })

    const late = setup(
      { accessTokenExpiresAt: NOW, expiresAt: NOW + 1_000, refreshTokenExpiresAt: NOW + 1_000 },
      bankAfterLostRotation('expired'),
    )
    // Our clock (no Date header here) passes the end while the refresh is refused.
    let t = NOW - 1_000
    const lateDeps = { ...late.deps, now: () => (t += 1_000), settings: { ...DEFAULT_SYNC_SETTINGS, expiryWarningMs: 0 } }
    expect(await syncConsent(late.consent, lateDeps)).toEqual({ kind: 'stopped', status: 'EXPIRED' })
  })
})
