import { randomBytes } from 'node:crypto'
import { loadConfig } from '@tep/config'
import { describe, expect, it } from 'vitest'
import { bankSyncEnv, resolveCustomerTokenKey } from './config.ts'
import { CustomerAuthError, CustomerTokenVerifier, mintCustomerToken } from './customer-token.ts'
import { BankSyncConfigError } from './errors.ts'

const NOW = Date.parse('2026-05-04T08:00:00Z')
const oldKey = randomBytes(32)
const newKey = randomBytes(32)

describe('customer token key rotation (kid)', () => {
  const config = (key: string) =>
    resolveCustomerTokenKey(loadConfig('bank-sync', bankSyncEnv, { CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY: key }))

  it('accepts tokens of the new and the old key while both are configured, each by its kid', async () => {
    const { key } = config(`new:${newKey.toString('base64')},old:${oldKey.toString('base64')}`)
    const verifier = new CustomerTokenVerifier({ key, now: () => NOW })
    const bearer = async (k: Buffer, kid?: string) =>
      `Bearer ${await mintCustomerToken(k, 'cust-1', { now: NOW, ...(kid === undefined ? {} : { kid }) })}`
    expect(await verifier.customerOf(await bearer(newKey, 'new'))).toBe('cust-1')
    expect(await verifier.customerOf(await bearer(oldKey, 'old'))).toBe('cust-1')
    // Tokens minted before the bank application named its key: any configured key.
    expect(await verifier.customerOf(await bearer(oldKey))).toBe('cust-1')
    // A kid names ONE key: the old key's token under the new kid is refused, as is an unknown kid.
    await expect(verifier.customerOf(await bearer(oldKey, 'new'))).rejects.toBeInstanceOf(CustomerAuthError)
    await expect(verifier.customerOf(await bearer(newKey, 'gone'))).rejects.toBeInstanceOf(CustomerAuthError)
  })

  it('refuses the old key once it is removed from the configuration', async () => {
    const { key } = config(`new:${newKey.toString('base64')}`)
    const verifier = new CustomerTokenVerifier({ key, now: () => NOW })
    await expect(
      verifier.customerOf(`Bearer ${await mintCustomerToken(oldKey, 'cust-1', { now: NOW, kid: 'old' })}`),
    ).rejects.toMatchObject({ code: 'CUSTOMER_TOKEN_INVALID' })
    await expect(verifier.customerOf(`Bearer ${await mintCustomerToken(oldKey, 'cust-1', { now: NOW })}`)).rejects.toMatchObject({
      code: 'CUSTOMER_TOKEN_INVALID',
    })
  })

  it('refuses a malformed list without echoing a key', () => {
    const short = randomBytes(16).toString('base64')
    expect(() => config(`a:${short}`)).toThrow(BankSyncConfigError)
    expect(() => config(`a:${short}`)).not.toThrow(new RegExp(short.replace(/[+/=]/g, '.')))
    expect(() => config(`a:${newKey.toString('base64')},a:${oldKey.toString('base64')}`)).toThrow(/twice/)
  })
})
