import { describe, expect, it } from 'vitest'
import { FaultInjector, validateFaults } from './faults.ts'
import { BankSimConfigError } from '../errors.ts'

describe('fault injection', () => {
  it('applies a fault to the next N matching requests only, then clears itself', () => {
    const f = new FaultInjector('s')
    f.set(validateFaults({ errorRate: 1, errorStatus: 502, count: 2, pathPrefix: '/accounts' }))
    expect(f.decide('/payments')).toEqual({ kind: 'none' })
    expect(f.decide('/accounts/1/balance')).toEqual({ kind: 'error', status: 502 })
    expect(f.decide('/accounts')).toEqual({ kind: 'error', status: 502 })
    expect(f.decide('/accounts')).toEqual({ kind: 'none' })
    expect(f.config).toEqual({})
    expect(f.injected.error).toBe(2)
  })

  it('prefers reset over throttle over error and hits roughly the configured share', () => {
    const f = new FaultInjector('s')
    f.set(validateFaults({ resetRate: 1, throttleRate: 1, errorRate: 1 }))
    expect(f.decide('/x').kind).toBe('reset')
    f.set(validateFaults({ throttleRate: 0.25, retryAfterSeconds: 3 }))
    let throttled = 0
    for (let i = 0; i < 4000; i++) {
      const d = f.decide('/x')
      if (d.kind === 'throttle') {
        throttled++
        expect(d.retryAfterSeconds).toBe(3)
      }
    }
    expect(throttled).toBeGreaterThan(800)
    expect(throttled).toBeLessThan(1200)
  })

  it('draws latency within the configured range', () => {
    const f = new FaultInjector('s')
    f.set(validateFaults({ latencyMs: { min: 5, max: 9 } }))
    for (let i = 0; i < 100; i++) {
      const ms = f.latencyMs('/accounts')
      expect(ms).toBeGreaterThanOrEqual(5)
      expect(ms).toBeLessThanOrEqual(9)
    }
  })

  it('names what is wrong with a configuration', () => {
    expect(() => validateFaults({ errorRate: 1.5 })).toThrow(/errorRate must be a number from 0 to 1/)
    expect(() => validateFaults({ errorStatus: 200 })).toThrow(BankSimConfigError)
    expect(() => validateFaults({ latencyMs: { min: 9, max: 5 } })).toThrow(/latencyMs/)
    expect(() => validateFaults({ pathPrefix: 'accounts' })).toThrow(/pathPrefix/)
    expect(() => validateFaults({ burst: 1 })).toThrow(/unknown fault setting burst/)
  })
})
