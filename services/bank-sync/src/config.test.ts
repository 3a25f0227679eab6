import { randomBytes } from 'node:crypto'
import { loadConfig } from '@tep/config'
import { describe, expect, it } from 'vitest'
import {
  bankSyncEnv,
  DEVELOPMENT_BANK_CLIENT,
  resolveBankClient,
  resolvePkce,
  DEVELOPMENT_CUSTOMER_TOKEN_KEY,
  DEVELOPMENT_KEY_ID,
  resolveCustomerTokenKey,
  resolveKeyring,
} from './config.ts'
import { BankSyncConfigError } from './errors.ts'

const key = () => randomBytes(32).toString('base64')
const config = (env: Record<string, string>) => loadConfig('bank-sync', bankSyncEnv, env)

describe('the development keys of bank-sync', () => {
  // A bank's egress sidecar or proxy is a loopback address too: the address must never decide.
  it.each(['http://127.0.0.1:15001', 'http://localhost:8182', 'http://[::1]:8182'])(
    'are refused for a loopback BANK_API_URL (%s) without BANK_SYNC_DEVELOPMENT_KEYS',
    (url) => {
      const cfg = config({ BANK_API_URL: url })
      expect(() => resolveKeyring(cfg)).toThrow(BankSyncConfigError)
      expect(() => resolveKeyring(cfg)).toThrow(/TOKEN_ENCRYPTION_KEY.*BANK_SYNC_DEVELOPMENT_KEYS=true/)
      expect(() => resolveCustomerTokenKey(cfg)).toThrow(
        /CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY.*BANK_SYNC_DEVELOPMENT_KEYS=true/,
      )
    },
  )

  it('are refused when the switch is false explicitly', () => {
    const cfg = config({ BANK_API_URL: 'http://127.0.0.1:8182', BANK_SYNC_DEVELOPMENT_KEYS: 'false' })
    expect(() => resolveCustomerTokenKey(cfg)).toThrow(BankSyncConfigError)
  })

  it('are used with the switch against the loopback simulator, and said to be', () => {
    const cfg = config({ BANK_API_URL: 'http://127.0.0.1:8182', BANK_SYNC_DEVELOPMENT_KEYS: 'true' })
    const keys = resolveKeyring(cfg)
    expect(keys.development).toBe(true)
    expect(keys.keyring.active.id).toBe(DEVELOPMENT_KEY_ID)
    expect(resolveCustomerTokenKey(cfg)).toEqual({ key: DEVELOPMENT_CUSTOMER_TOKEN_KEY, development: true })
  })

  it('are refused even with the switch when the bank is not on loopback', () => {
    const cfg = config({ BANK_API_URL: 'https://bank.example.com', BANK_SYNC_DEVELOPMENT_KEYS: 'true' })
    expect(() => resolveKeyring(cfg)).toThrow(
      /TOKEN_ENCRYPTION_KEY is required when BANK_API_URL is not a loopback/,
    )
    expect(() => resolveCustomerTokenKey(cfg)).toThrow(
      /CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY is required when BANK_API_URL is not a loopback/,
    )
  })

  it('never replace keys that are set, switch or not', () => {
    const customer = key()
    const cfg = config({
      BANK_API_URL: 'http://127.0.0.1:8182',
      BANK_SYNC_DEVELOPMENT_KEYS: 'true',
      TOKEN_ENCRYPTION_KEY: key(),
      CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY: customer,
    })
    expect(resolveKeyring(cfg).development).toBe(false)
    expect(resolveKeyring(cfg).keyring.active.id).toBe('k1')
    expect(resolveCustomerTokenKey(cfg)).toEqual({ key: Buffer.from(customer, 'base64'), development: false })
  })
})

describe('the bank client of bank-sync fails closed', () => {
  const client = { BANK_CLIENT_ID: 'real-id', BANK_CLIENT_SECRET: 'real-secret', BANK_REDIRECT_URI: 'https://consents.example.com/consents/callback' }

  it('refuses to start without BANK_CLIENT_ID, BANK_CLIENT_SECRET and BANK_REDIRECT_URI, naming each (no simulator defaults)', () => {
    const cfg = config({ BANK_API_URL: 'https://bank.example.com' })
    expect(() => resolveBankClient(cfg)).toThrow(/BANK_CLIENT_ID, BANK_CLIENT_SECRET, BANK_REDIRECT_URI are not set/)
    expect(() => resolveBankClient(config({ BANK_API_URL: 'https://bank.example.com', ...client, BANK_REDIRECT_URI: '' }))).toThrow(
      /^BANK_REDIRECT_URI is not set/,
    )
  })

  it('refuses the simulator defaults for a loopback bank without the switch, and for a real bank even with it', () => {
    expect(() => resolveBankClient(config({ BANK_API_URL: 'http://127.0.0.1:8182' }))).toThrow(BankSyncConfigError)
    expect(() => resolveBankClient(config({ BANK_API_URL: 'https://bank.example.com', BANK_SYNC_DEVELOPMENT_KEYS: 'true' }))).toThrow(
      /required when BANK_API_URL is not a loopback simulator/,
    )
  })

  it('uses the simulator client behind the switch, and what is set otherwise', () => {
    expect(resolveBankClient(config({ BANK_API_URL: 'http://127.0.0.1:8182', BANK_SYNC_DEVELOPMENT_KEYS: 'true' }))).toEqual({
      ...DEVELOPMENT_BANK_CLIENT,
      development: true,
    })
    expect(resolveBankClient(config({ BANK_API_URL: 'https://bank.example.com', ...client }))).toEqual({
      clientId: 'real-id',
      clientSecret: 'real-secret',
      redirectUri: client.BANK_REDIRECT_URI,
      development: false,
    })
  })

  it('accepts BANK_PKCE=off only with KAFKA_ALLOW_INSECURE=true', () => {
    const off = config({ BANK_PKCE: 'off' })
    expect(() => resolvePkce(off, {})).toThrow(/BANK_PKCE=off is refused unless KAFKA_ALLOW_INSECURE=true/)
    expect(() => resolvePkce(off, { KAFKA_ALLOW_INSECURE: 'false' })).toThrow(BankSyncConfigError)
    expect(resolvePkce(off, { KAFKA_ALLOW_INSECURE: 'true' })).toEqual({ pkce: false, insecure: true })
    expect(resolvePkce(config({}), {})).toEqual({ pkce: true, insecure: false })
  })
})
