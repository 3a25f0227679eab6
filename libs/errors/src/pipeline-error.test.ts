import { describe, expect, it } from 'vitest'
import { PipelineError, errorCode, isRetriable } from './pipeline-error.ts'

class ThrottledError extends PipelineError {
  constructor(cause?: unknown) {
    super('throttled', { code: 'THROTTLED', retriable: true, cause, details: { retryAfterMs: 1000 } })
  }
}

describe('PipelineError', () => {
  it('keeps code, retriable, cause and the subclass name', () => {
    const cause = new Error('socket hang up')
    const err = new ThrottledError(cause)
    expect(err.name).toBe('ThrottledError')
    expect(err.code).toBe('THROTTLED')
    expect(err.cause).toBe(cause)
    expect(isRetriable(err)).toBe(true)
    expect(err.toJSON()).toMatchObject({ code: 'THROTTLED', retryAfterMs: 1000 })
  })

  it('keeps its code and message in toJSON even when a detail has the same name', () => {
    const err = new PipelineError('API answered 503', { code: 'API_DOWN', details: { code: 503, message: 'upstream text', status: 503 } })
    expect(err.toJSON()).toMatchObject({ code: 'API_DOWN', message: 'API answered 503', status: 503, retriable: false })
  })

  it('treats foreign errors as not retriable with a generic code', () => {
    expect(isRetriable(new Error('x'))).toBe(false)
    expect(errorCode('boom')).toBe('UNEXPECTED')
    expect(isRetriable(new PipelineError('bad', { code: 'BAD_INPUT' }))).toBe(false)
  })
})
