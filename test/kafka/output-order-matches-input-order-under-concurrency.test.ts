import { afterAll, describe, expect, it } from 'vitest'
import type { TransactionalPipeline } from '@tep/kafka'
import { createKafkaTestKit } from '../support/kafka-test-kit.ts'
import {
  CommitCounter,
  pipelineKafka,
  pipelineTopics,
  produceInputs,
  startPipeline,
} from './pipeline-harness.ts'
import { readTopic, valuesByPartition } from '../support/read-topic.ts'

const kit = createKafkaTestKit()
const running: TransactionalPipeline[] = []
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()))
  await kit.disconnectAll()
})

describe('output order', () => {
  it('matches input order per partition although transforms finish out of order', async () => {
    const topics = await pipelineTopics(kit, 'order', 2)
    await produceInputs(kit, topics.input, 300)
    let inFlight = 0
    let peak = 0
    let finishedOutOfOrder = 0
    const lastFinished = new Map<number, bigint>()
    const counter = new CommitCounter()
    const { pipeline, started } = startPipeline(
      pipelineKafka(),
      topics,
      {
        concurrency: 16,
        partitionsConsumedConcurrently: 2,
        transform: async (record) => {
          inFlight++
          peak = Math.max(peak, inFlight)
          // Simulated I/O of random length: later records often finish first.
          await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 15)))
          inFlight--
          const offset = BigInt(record.offset)
          if (offset < (lastFinished.get(record.partition) ?? -1n)) finishedOutOfOrder++
          lastFinished.set(record.partition, offset)
          // Two outputs per input, to two topics: each topic keeps the order.
          return [
            { topic: topics.output, key: record.key, value: Buffer.from(`out:${record.value?.toString()}`) },
            { topic: topics.output, key: record.key, value: Buffer.from(`out2:${record.value?.toString()}`) },
          ]
        },
      },
      { onCommitted: counter.hook },
    )
    running.push(pipeline)
    await started
    await counter.reach(300)
    await pipeline.stop()

    // The test only proves something if transforms really overlapped and finished out of order.
    expect(peak).toBeGreaterThan(1)
    expect(finishedOutOfOrder).toBeGreaterThan(0)

    const inputs = valuesByPartition(await readTopic(kit.kafka, topics.input))
    const outputs = valuesByPartition(await readTopic(kit.kafka, topics.output))
    for (const [partition, values] of inputs) {
      expect(outputs.get(partition), `partition ${partition}`).toEqual(
        values.flatMap((v) => [`out:${v}`, `out2:${v}`]),
      )
    }
  })
})
