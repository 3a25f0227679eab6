import { Consumer, FetchIsolationLevels } from '@platformatic/kafka'
import { describe, expect, it } from 'vitest'
import { EOS_DEFAULTS, eosConsumerOptions } from './eos-options.ts'
import { BROKER_FAILOVER_MS, retryDelay } from './connection.ts'

const connection = { brokers: ['127.0.0.1:9092'], clientId: 'svc' }

describe("the exactly-once loop's consumer options", () => {
  it('bound a fetch answer to 1 MiB per partition and 8 MiB in all, not the client default of 50 MB', () => {
    const options = eosConsumerOptions(connection, 'group')
    expect(options).toMatchObject({ maxBytesPerPartition: 1_048_576, maxBytes: 8_388_608, isolationLevel: FetchIsolationLevels.READ_COMMITTED, autocommit: false })
    expect([options.maxBytesPerPartition, options.maxBytes]).toEqual([EOS_DEFAULTS.maxBytesPerPartition, EOS_DEFAULTS.maxBytes])
  })

  it('take the sizes and the fetch wait given, and the client accepts them', async () => {
    const options = eosConsumerOptions(connection, 'group', { maxBytesPerPartition: 65_536, maxBytes: 262_144, maxWaitTimeInMs: 20 })
    expect(options).toMatchObject({ maxBytesPerPartition: 65_536, maxBytes: 262_144, maxWaitTime: 20 })
    // The client validates its options when it is made (nothing connects before a request).
    const consumer = new Consumer(options)
    await consumer.close()
  })

  it("keep retrying a request (a fetch from a killed leader) for longer than the cluster takes to replace the broker", () => {
    const { retries } = eosConsumerOptions(connection, 'group')
    expect(typeof retries).toBe('number')
    const waited = Array.from({ length: Number(retries) }, (_, i) => retryDelay(undefined, 'fetch', i + 1)).reduce((a, b) => a + b, 0)
    // The controller fences a dead broker after 9 s (broker.session.timeout.ms) before it moves anything.
    expect(waited).toBeGreaterThanOrEqual(BROKER_FAILOVER_MS)
    expect(BROKER_FAILOVER_MS).toBeGreaterThan(9_000)
  })
})
