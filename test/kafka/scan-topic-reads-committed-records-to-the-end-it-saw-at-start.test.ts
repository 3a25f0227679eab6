import { afterAll, describe, expect, it } from 'vitest'
import { scanTopic, TopicScanTimeoutError } from '@tep/kafka'
import { createKafkaTestKit, uniqueName, withTransaction } from '../support/kafka-test-kit.ts'

const kit = createKafkaTestKit()
afterAll(() => kit.disconnectAll())

async function scan(topic: string, options: { from?: Date; timeoutMs?: number; during?: () => Promise<void> } = {}) {
  const seen: string[] = []
  let during = options.during
  const result = await scanTopic({
    kafka: kit.kafka,
    topic,
    ...(options.from === undefined ? {} : { from: options.from }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    onMessage: async (message, partition) => {
      seen.push(`p${partition}:${message.value?.toString('utf8')}`)
      const once = during
      during = undefined
      await once?.()
    },
  })
  return { seen: seen.sort(), records: result.records }
}

describe('scanTopic', () => {
  it('reads committed records up to the end offsets it saw at the start, skipping aborted ones and later writes', async () => {
    const topic = uniqueName('scan')
    await kit.createTopics([topic], 2)
    const producer = kit.producer({ transactionalId: uniqueName('scan-tx'), transactionTimeout: 10_000 })
    await producer.connect()
    await withTransaction(producer, (tx) =>
      tx.send(topic, [
        { partition: 0, value: 'a' },
        { partition: 1, value: 'b' },
      ]),
    )
    await expect(
      withTransaction(producer, async (tx) => {
        await tx.send(topic, [{ partition: 0, value: 'aborted' }])
        throw new Error('abort this one')
      }),
    ).rejects.toThrow('abort this one')
    await withTransaction(producer, (tx) => tx.send(topic, [{ partition: 1, value: 'c' }]))

    const { seen, records } = await scan(topic, {
      // A record written while the scan runs lies beyond the end it captured.
      during: () => withTransaction(producer, (tx) => tx.send(topic, [{ partition: 0, value: 'during' }])).then(() => undefined),
    })
    expect(seen).toEqual(['p0:a', 'p1:b', 'p1:c'])
    expect(records).toBe(3)

    expect((await scan(topic)).seen).toEqual(['p0:a', 'p0:during', 'p1:b', 'p1:c'])
  })

  it('ends early when its signal aborts, with what it read so far', async () => {
    const topic = uniqueName('scan-abort')
    await kit.createTopics([topic], 1)
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic, messages: ['a', 'b', 'c'].map((value) => ({ value })) })
    const controller = new AbortController()
    const seen: string[] = []
    const result = await scanTopic({
      kafka: kit.kafka,
      topic,
      signal: controller.signal,
      onMessage: (message) => {
        seen.push(message.value!.toString('utf8'))
        // The caller stops while the scan is under way: it must not read on to the end.
        controller.abort()
      },
    })
    expect(result.records).toBe(1)
    expect(seen).toEqual(['a'])
  })

  it('starts at the first record written at or after `from`', async () => {
    const topic = uniqueName('scan-from')
    // Retention off: the broker's 5-minute check would otherwise remove records this old.
    await kit.createTopics([topic], 1, { 'retention.ms': '-1' })
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic, messages: [{ value: 'old', timestamp: String(Date.parse('2026-01-01T00:00:00Z')) }] })
    await producer.send({ topic, messages: [{ value: 'new', timestamp: String(Date.parse('2026-01-02T00:00:00Z')) }] })

    expect((await scan(topic, { from: new Date('2026-01-01T12:00:00Z') })).seen).toEqual(['p0:new'])
    expect((await scan(topic, { from: new Date('2026-01-03T00:00:00Z') })).records).toBe(0)
  })

  it('ends at the last stable offset: a transaction open at the start neither blocks the scan nor is part of it', async () => {
    const topic = uniqueName('scan-open')
    await kit.createTopics([topic], 1)
    const producer = kit.producer({ transactionalId: uniqueName('scan-open-tx'), transactionTimeout: 60_000 })
    await producer.connect()
    await withTransaction(producer, (tx) => tx.send(topic, [{ value: 'committed' }]))
    const open = await producer.transaction()
    try {
      await open.send({ topic, messages: [{ value: 'pending' }] })
      expect((await scan(topic)).seen).toEqual(['p0:committed'])
    } finally {
      await open.abort()
    }
  })

  it('fails with a retriable TopicScanTimeoutError naming the partitions it did not finish', async () => {
    const topic = uniqueName('scan-timeout')
    await kit.createTopics([topic], 1)
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic, messages: [{ value: 'x' }] })
    // The handler of the first record holds the scan until the test has its error.
    const stuck = Promise.withResolvers<void>()
    const failure = await scan(topic, { timeoutMs: 500, during: () => stuck.promise }).catch((err: unknown) => err)
    stuck.resolve()
    expect(failure).toBeInstanceOf(TopicScanTimeoutError)
    expect(failure).toMatchObject({ code: 'TOPIC_SCAN_TIMEOUT', retriable: true, details: { topic, partitionsLeft: [0] } })
  })
})
