import { afterAll, describe, expect, it } from 'vitest'
import { ensureTopics, transactionalProducerConfig, withTransaction } from '@tep/kafka'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'

const kit = createKafkaTestKit()
afterAll(() => kit.disconnectAll())

describe('withTransaction', () => {
  it('commits records to several topics together, or none of them when the work throws', async () => {
    const base = uniqueName('withtx')
    const items = `${base}.items`
    const cursor = `${base}.cursor`
    await ensureTopics(kit.kafka, [
      {
        name: items,
        partitions: 2,
        cleanupPolicy: 'delete',
        valueSchema: null,
        key: 'entity',
        configs: {},
        description: 'test items',
      },
      {
        name: cursor,
        partitions: 1,
        cleanupPolicy: 'compact',
        valueSchema: null,
        key: 'feed',
        configs: {},
        description: 'test cursor',
      },
    ])
    const producer = kit.producer(transactionalProducerConfig(`${base}.tx`, { transactionTimeout: 10_000 }))
    await producer.connect()

    const result = await withTransaction(producer, async (tx) => {
      await tx.send(items, [
        { key: 'shop-1', value: 'item 101' },
        { key: 'shop-2', value: 'item 102' },
      ])
      await tx.send(cursor, [{ key: 'feed', value: '102' }])
      return 102
    })
    expect(result).toBe(102)

    const failure = new Error('feed page could not be parsed')
    await expect(
      withTransaction(producer, async (tx) => {
        await tx.send(items, [{ key: 'shop-3', value: 'item 103' }])
        await tx.send(cursor, [{ key: 'feed', value: '103' }])
        throw failure
      }),
    ).rejects.toBe(failure)

    // The producer is usable again after an abort.
    await withTransaction(producer, async (tx) => {
      await tx.send(cursor, [{ key: 'feed', value: '102-confirmed' }])
    })

    const committedItems = (await readTopic(kit.kafka, items)).map((m) => m.value?.toString()).sort()
    const committedCursor = (await readTopic(kit.kafka, cursor)).map((m) => m.value?.toString())
    expect(committedItems).toEqual(['item 101', 'item 102'])
    expect(committedCursor).toEqual(['102', '102-confirmed'])
    // The aborted records were written, but only a read-uncommitted reader sees them.
    const allCursor = (await readTopic(kit.kafka, cursor, { readUncommitted: true })).map((m) =>
      m.value?.toString(),
    )
    expect(allCursor).toEqual(['102', '103', '102-confirmed'])
  })
})
