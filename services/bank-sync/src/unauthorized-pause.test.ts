import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createBankClient, type BankClient } from '@tep/bank-client'
import { exampleConsent, type Consent } from '@tep/schemas'
import { createKeyring, TokenCipher } from '@tep/token-cipher'
import { afterEach, describe, expect, it } from 'vitest'
import { openConsentToken } from './consent-binding.ts'
import { syncConsent } from './consent-syncer.ts'
import { DEFAULT_SYNC_SETTINGS } from './sync-deps.ts'
import { NOW, SYNCING_CONSENT_DATES, syncDeps } from './consent-syncer.test-support.ts'


/**
 * A bank on loopback, reached through the real bank client, so that its answers are mapped as
 * in production. `authorized(token)` says how the accounts interface treats an access token;
 * the token endpoint issues `access-<n>` / `refresh-<n>` answering `tokenBody`.
 */
interface HttpBank {
  client: BankClient
  requests: string[]
  close(): Promise<void>
}

type Verdict = 'ok' | 'bare-401' | 'revoked'

async function httpBank(
  authorized: (token: string) => Verdict,
  tokenBody: (n: number) => Record<string, unknown> = (n) => ({
    access_token: `access-${n}`,
    refresh_token: `refresh-${n}`,
  }),
  refresh: 'ok' | 'invalid_grant' = 'ok',
): Promise<HttpBank> {
  const requests: string[] = []
  let issued = 1
  const server: Server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? ''
      const json = (status: number, body?: unknown) =>
        // The bank's clock is the test's (the end verdict reads the Date header).
        res
          .writeHead(status, { 'content-type': 'application/json', date: new Date(NOW).toUTCString() })
          .end(body === undefined ? '' : JSON.stringify(body))
      if (path === '/oauth2/token') {
        requests.push('token')
        if (refresh === 'invalid_grant') return json(401, { error: 'invalid_grant' })
        issued++
        return json(200, tokenBody(issued))
      }
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '')
      requests.push(`${path}:${token}`)
      const verdict = authorized(token)
      if (verdict === 'bare-401') return json(401)
      if (verdict === 'revoked')
        return json(401, { errors: [{ error: 'UNAUTHORISED', parameters: { REASON: 'TOKEN_REVOKED' } }] })
      if (path === '/accounts')
        return json(200, { pageNumber: 0, pageCount: 1, accounts: [{ id: 'acc-1', currency: 'CZK' }] })
      return json(200, { pageNumber: 0, pageCount: 1, transactions: [] })
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const client = createBankClient({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    clientId: 'c',
    clientSecret: 's',
    redirectUri: 'http://127.0.0.1/cb',
    tppName: 'TEP',
    retry: { retries: 0 },
    now: () => new Date(NOW),
  })
  return {
    client,
    requests,
    close: async () => {
      await client.close()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

let bank: HttpBank | undefined
afterEach(async () => {
  await bank?.close()
  bank = undefined
})

function setup(b: BankClient, overrides: Partial<Consent> = {}) {
  const cipher = new TokenCipher(createKeyring([{ id: 't', key: randomBytes(32) }]))
  const base = exampleConsent()
  const consent: Consent = {
    ...base,
    status: 'ACTIVE',
    accessToken: cipher.encrypt('access-1', base.consentId),
    refreshToken: cipher.encrypt('refresh-1', base.consentId),
    // Valid for 50 more minutes as far as bank-sync knows: the bank disagrees.
    ...SYNCING_CONSENT_DATES,
    ...overrides,
  }
  const { deps, writes, registry } = syncDeps(b, cipher, consent)
  return { consent, deps, writes, cipher, registry }
}

describe('token answers and 401s that do not say the consent ended', () => {
  it('an access token the bank refuses with a bare 401: one refresh, one more read, the consent stays ACTIVE and syncs', async () => {
    bank = await httpBank((t) => (t === 'access-1' ? 'bare-401' : 'ok'))
    const { consent, deps, writes, cipher } = setup(bank.client)
    const outcome = await syncConsent(consent, deps)
    expect(outcome.kind).toBe('synced')
    expect(bank.requests).toEqual([
      '/accounts:access-1',
      'token',
      '/accounts:access-2',
      '/accounts/acc-1/transactions:access-2',
    ])
    expect(writes.map((w) => [w.reason, w.consent.status])).toEqual([
      ['TOKEN_REFRESH', 'ACTIVE'],
      ['SYNC', 'ACTIVE'],
    ])
    expect(openConsentToken(cipher, writes[1]?.consent.accessToken as string, consent).token).toBe('access-2')
  })

  it('a refresh answered without expires_in keeps the consent syncing; the default lifetime makes the next sync refresh first', async () => {
    bank = await httpBank(() => 'ok')
    // the access token expires within the refresh margin: the sync refreshes before reading
    const { consent, deps, writes } = setup(bank.client, { accessTokenExpiresAt: NOW + 30_000 })
    expect((await syncConsent(consent, deps)).kind).toBe('synced')
    expect(bank.requests[0]).toBe('token')
    expect(writes.map((w) => [w.reason, w.consent.status, w.consent.accessTokenExpiresAt])).toEqual([
      ['TOKEN_REFRESH', 'ACTIVE', NOW + 5 * 60_000],
      ['SYNC', 'ACTIVE', NOW + 5 * 60_000],
    ])
  })

  it('still refused after the refresh: paused (ACTIVE, tokens kept, nothing ended), counted and retried later', async () => {
    bank = await httpBank(() => 'bare-401')
    const { consent, deps, writes, registry } = setup(bank.client)
    const outcome = await syncConsent(consent, deps)
    expect(outcome).toMatchObject({
      kind: 'backoff',
      code: 'CONSENT_PAUSED_UNAUTHORIZED',
      retryAfterMs: DEFAULT_SYNC_SETTINGS.unauthorizedPauseMs,
    })
    // refreshed once, read twice, never more
    expect(bank.requests).toEqual(['/accounts:access-1', 'token', '/accounts:access-2'])
    // the only write is the refreshed pair: never REVOKED, tokens kept
    expect(writes.map((w) => [w.reason, w.consent.status])).toEqual([['TOKEN_REFRESH', 'ACTIVE']])
    expect(writes[0]?.consent.refreshToken).not.toBeNull()
    expect(await registry.metrics()).toMatch(
      /bank_sync_api_errors_total\{code="CONSENT_PAUSED_UNAUTHORIZED"[^}]*\} 1/,
    )
  })

  it('a bare 401 whose refresh the bank refuses (invalid_grant) and whose probe it refuses too still ends REVOKED', async () => {
    bank = await httpBank(() => 'bare-401', undefined, 'invalid_grant')
    const { consent, deps, writes } = setup(bank.client)
    expect(await syncConsent(consent, deps)).toEqual({ kind: 'stopped', status: 'REVOKED' })
    expect(writes.map((w) => [w.reason, w.consent.refreshToken])).toEqual([['REVOKED', null]])
  })

  it('TOKEN_REVOKED ends the consent at once, without a refresh', async () => {
    bank = await httpBank(() => 'revoked')
    const { consent, deps, writes } = setup(bank.client)
    expect(await syncConsent(consent, deps)).toEqual({ kind: 'stopped', status: 'REVOKED' })
    expect(bank.requests.filter((r) => r === 'token')).toEqual([])
    expect(writes.map((w) => [w.reason, w.consent.statusReason])).toEqual([['REVOKED', 'TOKEN_REVOKED']])
  })
})
