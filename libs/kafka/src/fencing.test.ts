import { describe, expect, it } from 'vitest'
import { isFencedError } from './fencing.ts'

describe('isFencedError', () => {
  it('recognises fencing directly, by code, and wrapped in retry errors', () => {
    expect(isFencedError({ type: 'INVALID_PRODUCER_EPOCH' })).toBe(true)
    expect(isFencedError({ type: 'UNKNOWN', code: 90 })).toBe(true)
    expect(
      isFencedError(
        Object.assign(new Error('retries exceeded'), { originalError: { type: 'PRODUCER_FENCED' } }),
      ),
    ).toBe(true)
    expect(isFencedError(new Error('x', { cause: { type: 'TRANSACTION_COORDINATOR_FENCED' } }))).toBe(true)
  })
  it('does not mistake other failures for fencing', () => {
    expect(isFencedError({ type: 'REQUEST_TIMED_OUT', code: 7 })).toBe(false)
    expect(isFencedError(new Error('boom'))).toBe(false)
    expect(isFencedError(undefined)).toBe(false)
  })
})
