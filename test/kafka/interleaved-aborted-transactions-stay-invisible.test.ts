/**
 * Regression: KafkaJS 2.2.4's read-committed filter let aborted records through
 * when two producers' aborted transactions interleave in one partition (the
 * broker lists them in abort order, KafkaJS expected first-offset order). The DLQ
 * and merchant.fetched.v1 partitions are written by several transactional
 * producers (one per ingest instance, besides the other writers), so this is
 * their everyday shape. KafkaJS is gone; the shape stays pinned for the reader
 * every tool and test uses now (TopicReader, through readTopic).
 */
import { createKafka } from '@tep/kafka'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'
import { abortingProducers, writeInterleavedAborts } from './aborted-transaction-shapes.ts'

const kit = createKafkaTestKit()
afterAll(() => kit.disconnectAll())

describe('two producers whose aborted transactions interleave in one partition', () => {
  it('show nothing of either to a read-committed reader', async () => {
    const topic = uniqueName('aborted-interleaved')
    await kit.createTopics([topic], 1)
    const producers = await abortingProducers(kit, topic)
    const producerB = producers.b
    const plain = kit.producer()
    await plain.connect()
    // B begins first, A aborts first: the broker lists A's transaction before B's.
    await writeInterleavedAborts(topic, producers)
    // Each producer's next transaction commits: none of it may be hidden either.
    const txB2 = await producerB.transaction()
    await txB2.send({ topic, messages: [{ key: 'b', value: 'b2 committed' }] })
    await txB2.commit()
    await plain.send({ topic, messages: [{ key: 'c', value: 'c plain' }] })

    const reader = createKafka({
      brokers: inject('kafkaBrokers'),
      clientId: uniqueName('reader'),
      logLevel: 'error',
    })
    const values = (await readTopic(reader, topic)).map((m) => m.value?.toString())
    expect(values).toEqual(['b2 committed', 'c plain'])
  })
})
