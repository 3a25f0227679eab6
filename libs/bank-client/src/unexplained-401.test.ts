import { afterEach, describe, expect, it } from 'vitest'
import { BankConsentRevokedError, BankUnexplainedUnauthorizedError } from './errors.ts'
import { startFakeBank, type FakeBank } from './fake-bank.test-support.ts'

let bank: FakeBank | undefined
afterEach(async () => {
  await bank?.close()
  bank = undefined
})

describe('a 401 on an API call', () => {
  it('without REASON is UNAUTHORIZED_UNEXPLAINED (not CONSENT_REVOKED) and reported as drift', async () => {
    bank = await startFakeBank(() => ({ status: 401 }))
    const err = await bank.client.accounts.listAccounts().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(BankUnexplainedUnauthorizedError)
    expect(err).not.toBeInstanceOf(BankConsentRevokedError)
    expect(bank.drifts).toEqual([
      { api: 'bank', operation: 'bank.accounts.listAccounts', field: 'REASON', kind: 'bare-401' },
    ])
  })

  it('with a reason nobody modelled is reported with that reason', async () => {
    bank = await startFakeBank(() => ({
      status: 401,
      body: { errors: [{ error: 'UNAUTHORISED', parameters: { REASON: 'TOKEN_INACTIVE' } }] },
    }))
    await expect(bank.client.accounts.listAccounts()).rejects.toBeInstanceOf(BankUnexplainedUnauthorizedError)
    expect(bank.drifts).toEqual([
      {
        api: 'bank',
        operation: 'bank.accounts.listAccounts',
        field: 'REASON',
        kind: 'unknown-401-reason',
        detail: 'TOKEN_INACTIVE',
      },
    ])
  })

  it('with TOKEN_REVOKED is still the end of the consent, and no drift', async () => {
    bank = await startFakeBank(() => ({
      status: 401,
      body: { errors: [{ error: 'UNAUTHORISED', parameters: { REASON: 'TOKEN_REVOKED' } }] },
    }))
    await expect(bank.client.accounts.listAccounts()).rejects.toMatchObject({
      code: 'CONSENT_REVOKED',
      reason: 'TOKEN_REVOKED',
    })
    expect(bank.drifts).toEqual([])
  })
})
