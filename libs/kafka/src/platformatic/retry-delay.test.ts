import { MultipleErrors, ProtocolError, ResponseError } from '@platformatic/kafka'
import { describe, expect, it } from 'vitest'
import { REQUEST_RETRIES, retryDelay } from './connection.ts'

// AddPartitionsToTxn (api 24) answered CONCURRENT_TRANSACTIONS (51) for one partition, as the client reports it.
const concurrentTransactions = () => new ResponseError(24, 5, { '/results/0': [51, null] }, {})

describe('retryDelay', () => {
  it('doubles from 5 ms per attempt and stops at 1 s', () => {
    const delays = Array.from({ length: REQUEST_RETRIES }, (_, i) => retryDelay(undefined, 'produce', i + 1, REQUEST_RETRIES, new ProtocolError('NOT_LEADER_OR_FOLLOWER')))
    expect(delays).toEqual([10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000])
  })

  it('retries CONCURRENT_TRANSACTIONS after 2, 4 and 8 ms first (the markers of the last commit being written), keeping the whole budget', () => {
    const delays = Array.from({ length: REQUEST_RETRIES }, (_, i) => retryDelay(undefined, 'addPartitionsToTransaction', i + 1, REQUEST_RETRIES, concurrentTransactions()))
    expect(delays).toEqual([2, 4, 8, 80, 160, 320, 640, 1000, 1000, 1000])
    // A coordinator still aborting for seconds (its partition leader down) is waited out as long as before.
    expect(delays.reduce((a, b) => a + b, 0)).toBeGreaterThan(4_000)
    // Found inside the client's retry wrapper as well.
    expect(retryDelay(undefined, 'addPartitionsToTransaction', 1, REQUEST_RETRIES, new MultipleErrors('failed 2 times', [concurrentTransactions()]))).toBe(2)
  })

  it('keeps the ordinary delay when no error is given', () => {
    expect(retryDelay(undefined, 'txnOffsetCommit', 0)).toBe(5)
    expect(retryDelay(undefined, 'txnOffsetCommit', 3)).toBe(40)
  })
})
