import { afterAll, describe, expect, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from './kafka-test-kit.ts'
import { readTopic, valuesByPartition } from './read-topic.ts'
import { waitFor } from './wait-for.ts'

// The shared helpers are only worth something if they fail for real defects:
// these pin what every other integration test relies on.
describe('kafka test kit', () => {
  const kit = createKafkaTestKit()
  afterAll(() => kit.disconnectAll())

  it('creates topics with the requested partitions, each with a leader', async () => {
    const topics = [uniqueName('kit-a'), uniqueName('kit-b')]
    await kit.createTopics(topics, 3)
    const admin = kit.admin()
    await admin.connect()
    const { topics: metadata } = await admin.fetchTopicMetadata({ topics })
    await admin.disconnect()
    expect(metadata.map((t) => t.name).sort()).toEqual([...topics].sort())
    for (const t of metadata) {
      expect(t.partitions).toHaveLength(3)
      expect(t.partitions.every((p) => p.leader >= 0)).toBe(true)
    }
  })

  it('collects committed messages in order and never an aborted one', async () => {
    const topic = uniqueName('kit-txn')
    await kit.createTopics([topic], 1)
    const producer = kit.producer({
      transactionalId: uniqueName('kit-tx'),
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: 10_000,
    })
    await producer.connect()
    const send = async (values: string[], commit: boolean) => {
      const tx = await producer.transaction()
      await tx.send({ topic, messages: values.map((value) => ({ key: 'k', value })) })
      await (commit ? tx.commit() : tx.abort())
    }
    await send(['a', 'b'], true)
    await send(['aborted'], false)
    await send(['c'], true)

    const messages = await kit.collect(topic, 3)
    expect(messages.map((m) => m.value?.toString())).toEqual(['a', 'b', 'c'])
    expect(messages.every((m) => m.topic === topic && m.partition === 0 && m.key?.toString() === 'k')).toBe(
      true,
    )
  })

  it('sees the aborted record only when asked to read uncommitted', async () => {
    const topic = uniqueName('kit-uncommitted')
    await kit.createTopics([topic], 1)
    const producer = kit.producer({
      transactionalId: uniqueName('kit-tx'),
      idempotent: true,
      maxInFlightRequests: 1,
    })
    await producer.connect()
    const tx = await producer.transaction()
    await tx.send({ topic, messages: [{ value: 'aborted' }] })
    await tx.abort()
    const plain = kit.producer()
    await plain.connect()
    await plain.send({ topic, messages: [{ value: 'plain' }] })

    const messages = await kit.collect(topic, 2, { readUncommitted: true })
    expect(messages.map((m) => m.value?.toString())).toEqual(['aborted', 'plain'])
  })

  it('says how many of how many arrived when the count is not reached', async () => {
    const topic = uniqueName('kit-short')
    await kit.createTopics([topic], 1)
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic, messages: [{ value: 'only one' }] })
    await expect(kit.collect(topic, 2, { timeoutMs: 3_000 })).rejects.toThrow(
      `received 1 of 2 messages from ${topic} within 3000 ms`,
    )
  })
})

describe('readTopic', () => {
  const kit = createKafkaTestKit()
  afterAll(() => kit.disconnectAll())

  it('reads every committed record to the end, per partition in order, and nothing aborted or still open', async () => {
    const topic = uniqueName('kit-read')
    await kit.createTopics([topic], 2)
    expect(await readTopic(kit.kafka, topic)).toEqual([])
    const producer = kit.producer({
      transactionalId: uniqueName('kit-read-tx'),
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: 30_000,
    })
    await producer.connect()
    const send = async (messages: { partition: number; value: string }[], commit: boolean) => {
      const tx = await producer.transaction()
      await tx.send({ topic, messages })
      await (commit ? tx.commit() : tx.abort())
    }
    await send(
      [
        { partition: 0, value: 'a' },
        { partition: 1, value: 'x' },
        { partition: 0, value: 'b' },
      ],
      true,
    )
    await send([{ partition: 0, value: 'aborted' }], false)
    await send([{ partition: 1, value: 'y' }], true)
    const open = await producer.transaction()
    try {
      await open.send({ topic, messages: [{ partition: 0, value: 'open' }] })
      const committed = await readTopic(kit.kafka, topic)
      expect(valuesByPartition(committed)).toEqual(
        new Map([
          [0, ['a', 'b']],
          [1, ['x', 'y']],
        ]),
      )
      const uncommitted = await readTopic(kit.kafka, topic, { readUncommitted: true })
      expect(valuesByPartition(uncommitted).get(0)).toEqual(['a', 'b', 'aborted'])
    } finally {
      await open.abort()
    }
  })
})

describe('waitFor', () => {
  it('returns the first value that is not undefined or false', async () => {
    let calls = 0
    const value = await waitFor('the third call', () => (++calls === 3 ? { calls } : undefined), {
      intervalMs: 1,
    })
    expect(value).toEqual({ calls: 3 })
  })

  it('names what it waited for and the last error on timeout', async () => {
    await expect(
      waitFor(
        'the registry',
        () => {
          throw new Error('ECONNREFUSED 127.0.0.1:1')
        },
        { timeoutMs: 200, intervalMs: 20 },
      ),
    ).rejects.toThrow(
      /timed out after 200 ms \(\d+ attempts\) waiting for the registry; last error: ECONNREFUSED/,
    )
  })
})
