import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { AuthorizationStateSigner, deriveStateKey } from './authorization-state.ts'
import { ConsentStateError } from './errors.ts'

function signer(now: { t: number }, key = deriveStateKey(randomBytes(32))) {
  return new AuthorizationStateSigner({ key, ttlMs: 600_000, now: () => now.t })
}

function problemOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (err) {
    if (err instanceof ConsentStateError) return err.problem
    throw err
  }
  return undefined
}

describe('AuthorizationStateSigner', () => {
  it('binds customer, consent and scope, and verifies on any instance with the same key', () => {
    const clock = { t: 1_000 }
    const key = deriveStateKey(randomBytes(32))
    const { state } = signer(clock, key).issue({ consentId: 'c-1', customerId: 'cust-1', scope: 'AISP', binding: 'b' })
    const claims = signer(clock, key).consume(state)
    expect(claims).toMatchObject({
      consentId: 'c-1',
      customerId: 'cust-1',
      scope: 'AISP',
      expiresAt: 601_000,
    })
  })

  it('is single use', () => {
    const clock = { t: 0 }
    const s = signer(clock)
    const { state } = s.issue({ consentId: 'c', customerId: 'x', scope: 'AISP', binding: 'b' })
    s.consume(state)
    expect(problemOf(() => s.consume(state))).toBe('REUSED')
  })

  it('expires after its time to live', () => {
    const clock = { t: 0 }
    const s = signer(clock)
    const { state } = s.issue({ consentId: 'c', customerId: 'x', scope: 'AISP', binding: 'b' })
    clock.t = 600_001
    expect(problemOf(() => s.consume(state))).toBe('EXPIRED')
  })

  it('refuses altered claims, another key and garbage', () => {
    const clock = { t: 0 }
    const s = signer(clock)
    const { state } = s.issue({ consentId: 'c', customerId: 'x', scope: 'AISP', binding: 'b' })
    const [body, mac] = state.split('.') as [string, string]
    // One byte of the sealed claims changed (the attacker cannot read them to alter a field).
    const sealed = Buffer.from(body, 'base64url')
    sealed[sealed.length - 20]! ^= 1
    const forged = `${sealed.toString('base64url')}.${mac}`
    expect(problemOf(() => s.consume(forged))).toBe('BAD_SIGNATURE')
    // Plain claims with a made-up signature are no state of ours either.
    const plain = Buffer.from(JSON.stringify({ consentId: 'c', customerId: 'attacker', scope: 'AISP', binding: 'b', expiresAt: 1e15, nonce: 'n' })).toString('base64url')
    expect(problemOf(() => s.consume(`${plain}.${mac}`))).toBe('BAD_SIGNATURE')
    expect(problemOf(() => signer(clock).consume(state))).toBe('BAD_SIGNATURE')
    expect(problemOf(() => s.consume('not-a-state'))).toBe('MALFORMED')
    expect(problemOf(() => s.consume('a.b.c'))).toBe('MALFORMED')
  })

  it('carries its claims encrypted: neither the customer nor the consent id can be read from it (bank, browser history)', () => {
    const s = signer({ t: 0 })
    const { state } = s.issue({ consentId: 'consent-4711', customerId: 'customer-0815', scope: 'AISP', binding: 'b' })
    const decoded = state.split('.').map((part) => Buffer.from(part, 'base64url').toString('latin1')).join(' ')
    for (const secret of ['consent-4711', 'customer-0815', 'AISP']) {
      expect(state).not.toContain(secret)
      expect(decoded).not.toContain(secret)
    }
    expect(s.consume(state)).toMatchObject({ consentId: 'consent-4711', customerId: 'customer-0815' })
  })

  it('fits the bank\'s 500 characters with the longest customer id the gateway accepts (128)', () => {
    const { state } = signer({ t: 0 }).issue({ consentId: '0f8fad5b-d9cb-469f-a165-70867728950e', customerId: 'c'.repeat(128), scope: 'AISP', binding: 'b'.repeat(43) })
    expect(state.length).toBeLessThanOrEqual(500)
  })

  it('derives a key different from the token key', () => {
    const tokenKey = randomBytes(32)
    expect(deriveStateKey(tokenKey).equals(tokenKey)).toBe(false)
    expect(deriveStateKey(tokenKey).equals(deriveStateKey(tokenKey))).toBe(true)
  })
})
