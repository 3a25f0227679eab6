/**
 * The loop reads its input read_committed: records of aborted transactions must
 * never be transformed. Two shapes that clients get wrong: aborted transactions
 * of two producers interleaved (B begins first, A aborts first), and ONE producer
 * with two aborted transactions around a committed one in the same fetch
 * (@platformatic/kafka 2.12.1 keeps one aborted range per producer, so the first
 * aborted transaction leaked; @tep/kafka filters the fetch again, see
 * libs/kafka/src/platformatic/aborted-filter.ts).
 */
import { afterAll, describe, expect, it } from 'vitest'
import type { TransactionalPipeline } from '@tep/kafka'
import { createKafkaTestKit } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'
import { abortingProducers, writeAbortedCommittedAborted, writeInterleavedAborts } from './aborted-transaction-shapes.ts'
import { CommitCounter, pipelineKafka, pipelineTopics, startPipeline } from './pipeline-harness.ts'

const kit = createKafkaTestKit()
const running: TransactionalPipeline[] = []
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()))
  await kit.disconnectAll()
})

describe('aborted input transactions', () => {
  it('never reach the transform, interleaved or repeated by one producer', async () => {
    const topics = await pipelineTopics(kit, 'aborted-input', 1)
    const topic = topics.input
    const producers = await abortingProducers(kit, topic)
    const plain = kit.producer()
    await plain.connect()
    await writeInterleavedAborts(topic, producers)
    await writeAbortedCommittedAborted(topic, producers.a)
    await plain.send({ topic, messages: [{ key: 'c', value: 'c plain' }] })

    const seen: string[] = []
    const counter = new CommitCounter()
    const { pipeline, started } = startPipeline(
      pipelineKafka(),
      topics,
      {
        transform: async (record) => {
          seen.push(record.value?.toString() ?? '<null>')
          return { topic: topics.output, key: record.key, value: Buffer.from(`out:${record.value?.toString()}`) }
        },
      },
      { onCommitted: counter.hook },
    )
    running.push(pipeline)
    await started
    await counter.reach(2)
    await pipeline.stop()

    expect(seen).toEqual(['a2 committed', 'c plain'])
    expect((await readTopic(kit.kafka, topics.output)).map((m) => m.value?.toString())).toEqual([
      'out:a2 committed',
      'out:c plain',
    ])
  })
})
