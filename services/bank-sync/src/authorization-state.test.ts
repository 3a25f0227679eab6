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
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>
    const forged = `${Buffer.from(JSON.stringify({ ...claims, customerId: 'attacker' })).toString('base64url')}.${mac}`
    expect(problemOf(() => s.consume(forged))).toBe('BAD_SIGNATURE')
    expect(problemOf(() => signer(clock).consume(state))).toBe('BAD_SIGNATURE')
    expect(problemOf(() => s.consume('not-a-state'))).toBe('MALFORMED')
    expect(problemOf(() => s.consume('a.b.c'))).toBe('MALFORMED')
  })

  it('derives a key different from the token key', () => {
    const tokenKey = randomBytes(32)
    expect(deriveStateKey(tokenKey).equals(tokenKey)).toBe(false)
    expect(deriveStateKey(tokenKey).equals(deriveStateKey(tokenKey))).toBe(true)
  })
})
