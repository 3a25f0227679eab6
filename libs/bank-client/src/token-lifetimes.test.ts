import { describe, expect, it } from 'vitest'
import { accessTokenNeedsRefresh, consentExpiresWithin, consentRemainingMs } from './token-lifetimes.ts'

const now = new Date('2026-05-04T08:00:00Z')
const at = (ms: number) => new Date(now.getTime() + ms)

describe('token lifetimes', () => {
  it('asks for a refresh inside the margin and not before', () => {
    expect(accessTokenNeedsRefresh({ accessTokenExpiresAt: at(61_000) }, now)).toBe(false)
    expect(accessTokenNeedsRefresh({ accessTokenExpiresAt: at(60_000) }, now)).toBe(true)
    expect(accessTokenNeedsRefresh({ accessTokenExpiresAt: at(-1) }, now)).toBe(true)
    expect(accessTokenNeedsRefresh({ accessTokenExpiresAt: at(300_000) }, now, 600_000)).toBe(true)
  })

  it('tells how long an accounts consent has left, and never expires the others', () => {
    const day = 86_400_000
    expect(consentRemainingMs({ refreshTokenExpiresAt: at(3 * day) }, now)).toBe(3 * day)
    expect(consentExpiresWithin({ refreshTokenExpiresAt: at(3 * day) }, now, 7 * day)).toBe(true)
    expect(consentExpiresWithin({ refreshTokenExpiresAt: at(8 * day) }, now, 7 * day)).toBe(false)
    expect(consentRemainingMs({ refreshTokenExpiresAt: null }, now)).toBeUndefined()
    expect(consentExpiresWithin({ refreshTokenExpiresAt: null }, now, 365 * day)).toBe(false)
  })
})
