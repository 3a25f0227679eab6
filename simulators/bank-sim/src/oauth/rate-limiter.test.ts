import { describe, expect, it } from 'vitest'
import { HourlyRateLimiter } from './rate-limiter.ts'
import { SimClock } from '../core/sim-clock.ts'

describe('authorization rate limit', () => {
  it('allows the limit per hour per operation and client, then answers the seconds until the window closes', () => {
    let wall = 0
    const clock = new SimClock({ wallClock: () => wall })
    const limiter = new HourlyRateLimiter(clock, 3)
    for (let i = 0; i < 3; i++) expect(limiter.take('POST /oauth2/token', 'app')).toBeUndefined()
    wall = 600_000
    expect(limiter.take('POST /oauth2/token', 'app')).toBe(3000)
    expect(limiter.take('POST /oauth2/token', 'other-app')).toBeUndefined()
    expect(limiter.take('GET /oauth2/authorize', 'app')).toBeUndefined()
    expect(limiter.rejected).toBe(1)
    wall = 3_600_000
    expect(limiter.take('POST /oauth2/token', 'app')).toBeUndefined()
  })

  it('restarts the windows when the limit changes', () => {
    const clock = new SimClock({ wallClock: () => 0 })
    const limiter = new HourlyRateLimiter(clock, 1)
    limiter.take('POST /oauth2/token', 'app')
    expect(limiter.take('POST /oauth2/token', 'app')).toBeGreaterThan(0)
    limiter.setLimit(2)
    expect(limiter.take('POST /oauth2/token', 'app')).toBeUndefined()
    expect(() => limiter.setLimit(0)).toThrow(/positive integer/)
  })
})
