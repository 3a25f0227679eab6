import { randomBytes } from 'node:crypto'
import type { BankClient, CallOptions, Page, Transaction } from '@tep/bank-client'
import { exampleConsent, type Consent } from '@tep/schemas'
import { createKeyring, TokenCipher, TokenDecryptionError } from '@tep/token-cipher'
import { describe, expect, it } from 'vitest'
import { consentBinding, openConsentToken } from './consent-binding.ts'
import { syncConsent } from './consent-syncer.ts'
import { SYNCING_CONSENT_DATES, syncDeps } from './consent-syncer.test-support.ts'


/** A bank that notes every call and answers with one account and no transactions. */
function fakeBank(calls: string[]): BankClient {
  return {
    authorization: {
      refresh: async () => {
        calls.push('refresh')
        throw new Error('no refresh expected here')
      },
    },
    accounts: {
      listAccounts: async (call: CallOptions) => {
        calls.push(`accounts:${String(call.accessToken)}`)
        return [{ id: 'acc-1', currency: 'CZK', identification: { iban: 'CZ00' } }]
      },
      transactionPages: (_accountId: string, _query: unknown, call: CallOptions) => {
        calls.push(`transactions:${String(call.accessToken)}`)
        return (async function* (): AsyncGenerator<Page<Transaction>> {
          yield { pageNumber: 0, pageCount: 1, pageSize: 100, items: [] }
        })()
      },
    },
  } as unknown as BankClient
}

function setup(seal: (cipher: TokenCipher, token: string, victim: Consent) => string) {
  const cipher = new TokenCipher(createKeyring([{ id: 't', key: randomBytes(32) }]))
  const base = exampleConsent()
  const victim: Consent = {
    ...base,
    status: 'ACTIVE',
    customerId: 'victim',
    ...SYNCING_CONSENT_DATES,
  }
  victim.accessToken = seal(cipher, 'access-1', victim)
  victim.refreshToken = seal(cipher, 'refresh-1', victim)
  const calls: string[] = []
  const { deps, writes, registry } = syncDeps(fakeBank(calls), cipher, victim)
  return { cipher, victim, calls, writes, deps, registry }
}

describe('consent tokens bound to consent AND customer', () => {
  it('refuses a victim record moved to another customerId: nothing read from the bank, nothing written', async () => {
    const { victim, calls, writes, deps } = setup((c, token, v) => c.encrypt(token, consentBinding(v)))
    // What a producer to bank.consents.v1 writes: the victim's sealed tokens under its own customer.
    const moved: Consent = { ...victim, customerId: 'attacker', version: victim.version + 1 }
    const outcome = await syncConsent(moved, deps)
    expect(outcome).toMatchObject({ kind: 'backoff', code: 'TOKEN_DECRYPTION_FAILED' })
    expect(calls).toEqual([])
    expect(writes).toEqual([])
    // The victim's own record still syncs.
    expect((await syncConsent(victim, deps)).kind).toBe('synced')
  })

  it('opens a record sealed with the legacy binding (consentId only), counts it, and seals it bound to the customer in the sync write', async () => {
    const { cipher, victim, writes, deps, registry } = setup((c, token, v) => c.encrypt(token, v.consentId))
    const outcome = await syncConsent(victim, deps)
    expect(outcome.kind).toBe('synced')
    const written = writes.at(-1)?.consent as Consent
    expect(cipher.decrypt(written.refreshToken as string, consentBinding(victim))).toBe('refresh-1')
    expect(cipher.decrypt(written.accessToken as string, consentBinding(victim))).toBe('access-1')
    expect(() => cipher.decrypt(written.refreshToken as string, victim.consentId)).toThrow(TokenDecryptionError)
    expect(openConsentToken(cipher, written.refreshToken as string, victim).legacy).toBe(false)
    expect(await registry.getSingleMetricAsString('bank_sync_legacy_token_bindings_total')).toMatch(
      /bank_sync_legacy_token_bindings_total\{[^}]*\} 1$/m,
    )
  })
})
