import { MultipleErrors, ProtocolError, ResponseError } from '@platformatic/kafka'
import { describe, expect, it } from 'vitest'
import { ProducerFencedError } from './errors.ts'
import { isFencedError } from './fencing.ts'

describe('isFencedError', () => {
  it('recognises KafkaJS fencing directly, by code, and wrapped in retry errors', () => {
    expect(isFencedError({ type: 'INVALID_PRODUCER_EPOCH' })).toBe(true)
    expect(isFencedError({ type: 'UNKNOWN', code: 90 })).toBe(true)
    expect(
      isFencedError(
        Object.assign(new Error('retries exceeded'), { originalError: { type: 'PRODUCER_FENCED' } }),
      ),
    ).toBe(true)
    expect(isFencedError(new Error('x', { cause: { type: 'TRANSACTION_COORDINATOR_FENCED' } }))).toBe(true)
  })

  it('recognises @platformatic/kafka protocol errors, also inside its retry and response errors', () => {
    expect(isFencedError(new ProtocolError('PRODUCER_FENCED'))).toBe(true)
    expect(isFencedError(new ProtocolError('INVALID_PRODUCER_EPOCH'))).toBe(true)
    // EndTxn answered PRODUCER_FENCED (code 90), as the client reports it.
    const response = new ResponseError(26, 3, { '': [90, null] }, {})
    expect(isFencedError(response)).toBe(true)
    expect(
      isFencedError(new MultipleErrors('Producing messages failed.', [new Error('other'), response])),
    ).toBe(true)
  })

  it("recognises this library's ProducerFencedError", () => {
    expect(isFencedError(new ProducerFencedError('poller'))).toBe(true)
  })

  it('does not mistake other failures for fencing', () => {
    expect(isFencedError({ type: 'REQUEST_TIMED_OUT', code: 7 })).toBe(false)
    expect(isFencedError(new ProtocolError('CONCURRENT_TRANSACTIONS'))).toBe(false)
    expect(isFencedError(new MultipleErrors('x', [new ProtocolError('NOT_COORDINATOR')]))).toBe(false)
    expect(isFencedError(new Error('boom'))).toBe(false)
    expect(isFencedError(undefined)).toBe(false)
  })
})
