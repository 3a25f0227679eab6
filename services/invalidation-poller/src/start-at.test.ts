import { describe, expect, it } from 'vitest'
import { startAtParser } from './start-at.ts'

describe('INVALIDATIONS_START_AT', () => {
  it('reads now, an ISO moment and a duration ago, resolved when asked', () => {
    const before = Date.now()
    expect(startAtParser.parse('now')().getTime()).toBeGreaterThanOrEqual(before)
    expect(startAtParser.parse('2026-01-31T00:00:00Z')().toISOString()).toBe('2026-01-31T00:00:00.000Z')
    const weekAgo = startAtParser.parse('7d')().getTime()
    expect(before - weekAgo).toBeGreaterThanOrEqual(7 * 86_400_000 - 1000)
    expect(before - weekAgo).toBeLessThanOrEqual(7 * 86_400_000 + 1000)
  })

  it('refuses anything else with a message that shows the accepted forms', () => {
    const result = startAtParser.safeParse('yesterday')
    expect(result.success).toBe(false)
    expect(result.error?.issues[0]?.message).toMatch(/now, an ISO-8601 date-time .* or a duration ago/)
    expect(startAtParser.safeParse('2026-13-45T00:00:00Z').success).toBe(false)
  })
})
