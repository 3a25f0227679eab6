import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { readCommitted, ValueDecoder } from '@tep/check-topics'
import { AuthorizationStateSigner, deriveStateKey } from '@tep/bank-sync'
import { TOPICS } from '@tep/kafka'
import { createKeyring, TokenCipher } from '@tep/token-cipher'
import { grantAtBank, startConsent } from './consent-grant.ts'
import { FUZZ_PAN } from './fuzz.ts'
import type { FaultSystem } from './system.ts'

export interface SecurityResult {
  passed: boolean
  checks: number
  failures: string[]
  notes: string[]
}

/** Bank access and refresh tokens as bank-sync stored them (sealed), opened with the run's key. */
async function bankTokens(system: FaultSystem): Promise<{ tokens: string[]; note?: string }> {
  const records = (await readCommitted({ brokers: system.stack.brokers, topics: [TOPICS.bankConsents], timeoutMs: 120_000 })).get(TOPICS.bankConsents) ?? []
  const decoder = new ValueDecoder(system.stack.registryUrl)
  const cipher = new TokenCipher(createKeyring([{ id: 'k1', key: Buffer.from(system.secrets.tokenEncryptionKey, 'base64') }]))
  const tokens = new Set<string>()
  let unopened = 0
  for (const r of records) {
    if (!r.value) continue
    const consent = await decoder.decode(r.value)
    for (const field of ['accessToken', 'refreshToken'] as const) {
      const sealed = consent[field]
      if (typeof sealed !== 'string') continue
      try {
        // Bound to the consent and its customer (the consentId alone for envelopes sealed before that).
        tokens.add(cipher.decryptMigrating(sealed, [String(consent.consentId), String(consent.customerId)], String(consent.consentId)).plaintext)
      } catch {
        unopened++
      }
    }
  }
  return { tokens: [...tokens], ...(unopened > 0 ? { note: `${unopened} sealed tokens could not be opened with the run's key, consent id and customer id (not scanned for)` } : {}) }
}

/**
 * No log line of any service or simulator holds a secret of the run: the client
 * secrets and the token key it generated, the authorization codes it saw, the
 * bank tokens bank-sync stored (opened with the run's key), the full card number
 * the fuzzer sent, or anything shaped like a JWT (the enrichment tokens).
 */
export async function scanLogsForSecrets(system: FaultSystem): Promise<SecurityResult> {
  const { tokens, note } = await bankTokens(system)
  const secrets: Array<{ what: string; value: string }> = [
    { what: 'enrichment client secret', value: system.secrets.enrichmentClientSecret },
    { what: 'bank client secret', value: system.secrets.bankClientSecret },
    { what: 'token encryption key', value: system.secrets.tokenEncryptionKey },
    { what: 'customer token key', value: system.secrets.customerTokenKey },
    { what: 'full card number', value: FUZZ_PAN },
    ...[...system.secrets.observed].map((value) => ({ what: 'authorization code', value })),
    ...tokens.map((value) => ({ what: 'bank access/refresh token', value })),
  ]
  const jwt = /eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}/
  const failures: string[] = []
  let lines = 0
  for (const file of readdirSync(system.logDir)) {
    const text = readFileSync(path.join(system.logDir, file), 'utf8')
    text.split('\n').forEach((line, i) => {
      lines++
      for (const s of secrets) if (s.value.length >= 6 && line.includes(s.value)) failures.push(`${file}:${i + 1} holds the ${s.what}`)
      if (jwt.test(line)) failures.push(`${file}:${i + 1} holds a JWT`)
    })
  }
  return {
    passed: failures.length === 0 && tokens.length > 0,
    checks: secrets.length,
    failures: tokens.length === 0 ? ['no bank token could be read back from bank.consents.v1, so none was looked for', ...failures.slice(0, 20)] : failures.slice(0, 20),
    notes: [`${lines} log lines scanned for ${secrets.length} secret values (${tokens.length} bank tokens, ${system.secrets.observed.size} authorization codes) and JWTs`, ...(note ? [note] : [])],
  }
}

async function callback(system: FaultSystem, query: Record<string, string>, cookie = ''): Promise<{ status: number; body: string }> {
  const res = await fetch(`${system.gatewayUrl}/consents/callback?${new URLSearchParams(query)}`, { headers: { accept: 'application/json', cookie } })
  return { status: res.status, body: await res.text() }
}

/** A state signed with the run's key the way the gateway signs it (its own signer, clock an hour back), so already expired. */
function expiredState(system: FaultSystem, consentId: string): string {
  const signer = new AuthorizationStateSigner({
    key: deriveStateKey(Buffer.from(system.secrets.tokenEncryptionKey, 'base64')),
    now: () => Date.now() - 3_600_000,
  })
  return signer.issue({ consentId, customerId: 'faults-expired', scope: 'AISP', binding: 'faults-expired-binding' }).state
}

/** The consent gateway refuses a replayed, expired or forged state and handles error=access_denied. */
export async function checkOAuthState(system: FaultSystem): Promise<SecurityResult> {
  const failures: string[] = []
  const notes: string[] = []
  const expect = (what: string, got: { status: number; body: string }, status: number, code: string) => {
    const ok = got.status === status && got.body.includes(code)
    notes.push(`${what}: ${got.status} ${(/"code"\s*:\s*"([A-Z_]+)"/.exec(got.body) ?? [])[1] ?? got.body.slice(0, 60)}`)
    if (!ok) failures.push(`${what}: expected ${status} ${code}, got ${got.status} ${got.body.slice(0, 200)}`)
  }
  // Replayed: a completed consent's state used again, with a fresh code.
  const first = await startConsent(system, 'faults-replay')
  const granted = await grantAtBank(system, 'user1', first)
  const ok = await fetch(granted.redirectUrl, { headers: { accept: 'application/json', cookie: first.cookie } })
  if (ok.status !== 201) failures.push(`a genuine callback was refused (${ok.status}); the replay check proves nothing`)
  const again = await grantAtBank(system, 'user1', first)
  // From the same browser (its cookie), so only the state's single use can refuse it.
  expect('replayed state', await callback(system, { code: new URL(again.redirectUrl).searchParams.get('code') ?? 'x', state: first.state }, first.cookie), 400, 'CONSENT_STATE_REUSED')
  // Expired.
  const other = await startConsent(system, 'faults-expired')
  expect('expired state', await callback(system, { code: 'any-code', state: expiredState(system, other.consentId) }), 400, 'CONSENT_STATE_EXPIRED')
  // Forged: a real state with its claims altered (signature no longer matches), and a made-up one.
  // The claims are sealed (AES-GCM): an attacker can only change bytes, not read and edit fields.
  const [body, sig] = other.state.split('.')
  const sealed = Buffer.from(body ?? '', 'base64url')
  sealed[Math.floor(sealed.length / 2)]! ^= 1
  const altered = `${sealed.toString('base64url')}.${sig}`
  expect('forged state (claims altered)', await callback(system, { code: 'any-code', state: altered }), 400, 'CONSENT_STATE_BAD_SIGNATURE')
  expect('forged state (made up)', await callback(system, { code: 'any-code', state: 'made-up-state' }), 400, 'CONSENT_STATE_MALFORMED')
  // The user said no at the bank.
  const denied = await startConsent(system, 'faults-denied')
  expect('error=access_denied', await callback(system, { error: 'access_denied', state: denied.state }, denied.cookie), 403, 'CONSENT_DENIED')
  return { passed: failures.length === 0, checks: 5, failures, notes }
}

/** Every bank API call without a valid token is answered 401 before any other check (missing X-Request-ID, bad body, unknown id). */
export async function checkBank401First(system: FaultSystem): Promise<SecurityResult> {
  const calls: Array<{ method: string; path: string; body?: string }> = [
    { method: 'GET', path: '/accounts' },
    { method: 'GET', path: '/accounts/no-such-account/balance' },
    { method: 'GET', path: '/accounts/no-such-account/transactions?pageSize=5000' },
    { method: 'GET', path: '/standingorders' },
    { method: 'POST', path: '/standingorders', body: '{not json' },
    { method: 'POST', path: '/payments/', body: '{not json' },
    { method: 'GET', path: '/payments/no-such-payment/status' },
    { method: 'POST', path: '/accounts/balanceCheck', body: '{}' },
    { method: 'POST', path: '/payments/balanceCheck', body: '{}' },
  ]
  const failures: string[] = []
  let checks = 0
  for (const call of calls) {
    for (const auth of [undefined, 'Bearer forged-token-from-the-fault-suite']) {
      checks++
      const headers: Record<string, string> = { accept: 'application/json' }
      if (auth) headers.authorization = auth
      if (call.body !== undefined) headers['content-type'] = 'application/json'
      const res = await fetch(`${system.bankUrl}${call.path}`, { method: call.method, headers, ...(call.body !== undefined ? { body: call.body } : {}) })
      const text = await res.text()
      if (res.status !== 401) failures.push(`${call.method} ${call.path} ${auth ? 'with a forged token' : 'without a token'} and without X-Request-ID: ${res.status} ${text.slice(0, 120)}`)
    }
  }
  return { passed: failures.length === 0, checks, failures, notes: [`${checks} calls without a valid token and without X-Request-ID`] }
}
