import { afterAll, describe, expect, it } from 'vitest'
import { TopicReader, type ReadBatch } from '@tep/kafka'
import { createKafkaTestKit, uniqueName, withTransaction } from '../support/kafka-test-kit.ts'

const kit = createKafkaTestKit()
afterAll(() => kit.disconnectAll())

/** Collects what a reader delivers and lets a test await the n-th record. */
function collector() {
  const seen: string[] = []
  const waiters: Array<{ n: number; resolve: () => void }> = []
  const onRecords = (batch: ReadBatch) => {
    for (const r of batch.records) seen.push(`${batch.topic.split('-')[0]}/p${batch.partition}@${r.offset}:${r.value?.toString('utf8') ?? 'tombstone'}`)
    for (const w of waiters.filter((x) => seen.length >= x.n)) w.resolve()
  }
  const atLeast = (n: number) =>
    seen.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))
  return { seen, onRecords, atLeast }
}

describe('TopicReader', () => {
  it('reads every partition of several topics from the beginning, follows later commits, and never shows aborted records', async () => {
    const a = uniqueName('alpha')
    const b = uniqueName('beta')
    await kit.createTopics([a, b], 3)
    const producer = kit.producer({ transactionalId: uniqueName('reader-tx'), transactionTimeout: 10_000 })
    await producer.connect()
    await withTransaction(producer, async (tx) => {
      await tx.send(a, [
        { partition: 0, value: 'a0' },
        { partition: 2, value: 'a2' },
      ])
      await tx.send(b, [{ partition: 1, key: 'k', value: null }])
    })
    await expect(
      withTransaction(producer, async (tx) => {
        await tx.send(a, [{ partition: 1, value: 'aborted' }])
        throw new Error('abort')
      }),
    ).rejects.toThrow('abort')

    const c = collector()
    const reader = new TopicReader({ kafka: kit.kafka, topics: [a, b], follow: true, maxWaitMs: 100, onRecords: c.onRecords })
    await reader.start()
    await reader.whenCaughtUp()
    expect(reader.caughtUp).toBe(true)
    expect([...c.seen].sort()).toEqual(['alpha/p0@0:a0', 'alpha/p2@0:a2', 'beta/p1@0:tombstone'])
    // Positions stand past the commit and abort markers, at the end offsets.
    expect(reader.positions()).toEqual(await reader.endOffsets())

    await withTransaction(producer, (tx) => tx.send(a, [{ partition: 1, value: 'later' }]))
    await c.atLeast(4)
    expect(c.seen[3]).toBe('alpha/p1@2:later')
    await reader.stop()
  })

  it('starts each partition at a given position, and a bounded read ends at the end offsets it saw at start', async () => {
    const topic = uniqueName('gamma')
    await kit.createTopics([topic], 2)
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic, messages: ['x0', 'x1', 'x2'].map((value) => ({ partition: 0, value })) })
    await producer.send({ topic, messages: [{ partition: 1, value: 'y0' }] })

    const c = collector()
    const reader = new TopicReader({
      kafka: kit.kafka,
      topics: [topic],
      positions: new Map([[`${topic}:0`, 2n]]),
      onRecords: async (batch) => {
        c.onRecords(batch)
        // Written during the read: beyond the end captured at start, so not part of it.
        await producer.send({ topic, messages: [{ partition: batch.partition, value: 'during' }] })
      },
    })
    await reader.start()
    await reader.done()
    expect([...c.seen].sort()).toEqual(['gamma/p0@2:x2', 'gamma/p1@0:y0'])
    expect(reader.positions()).toEqual(new Map([[`${topic}:0`, 3n], [`${topic}:1`, 1n]]))
    await reader.stop()
  })

  it('reads only the partitions it is given, e.g. a consumer group member\'s assignment', async () => {
    const topic = uniqueName('epsilon')
    await kit.createTopics([topic], 3)
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic, messages: [0, 1, 2].map((partition) => ({ partition, value: `e${partition}` })) })
    expect(() => new TopicReader({ kafka: kit.kafka, topics: [topic], partitions: [{ topic: 'other', partition: 0 }], onRecords: () => {} })).toThrow('not of its topics')

    const c = collector()
    const partitions = [{ topic, partition: 2 }, { topic, partition: 0 }]
    const reader = new TopicReader({ kafka: kit.kafka, topics: [topic], partitions, follow: true, maxWaitMs: 100, onRecords: c.onRecords })
    await reader.start()
    await reader.whenCaughtUp()
    expect([...c.seen].sort()).toEqual(['epsilon/p0@0:e0', 'epsilon/p2@0:e2'])
    expect([...reader.positions().keys()].sort()).toEqual([`${topic}:0`, `${topic}:2`])
    expect(reader.positions()).toEqual(await reader.endOffsets())

    // Partition 1's record is written first: were it read, it would come before partition 2's or in the same fetch.
    await producer.send({ topic, messages: [{ partition: 1, value: 'later1' }] })
    await producer.send({ topic, messages: [{ partition: 2, value: 'later2' }] })
    await c.atLeast(3)
    expect(c.seen.slice(2)).toEqual(['epsilon/p2@1:later2'])
    await reader.stop()
  })

  it('stops with the error its handler threw', async () => {
    const topic = uniqueName('delta')
    await kit.createTopics([topic], 1)
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic, messages: [{ value: 'boom' }] })
    const reader = new TopicReader({
      kafka: kit.kafka,
      topics: [topic],
      follow: true,
      onRecords: () => {
        throw new Error('handler failed')
      },
    })
    await reader.start()
    await expect(reader.done()).rejects.toThrow('handler failed')
    await reader.stop()
  })
})
