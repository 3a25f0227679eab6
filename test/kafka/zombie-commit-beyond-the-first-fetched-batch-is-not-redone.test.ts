/**
 * Regression: a committed offset read back after an assignment was applied only
 * to the batch in hand. When a zombie (the previous owner) had committed further
 * than that first fetch reached, the records between the end of the batch and the
 * zombie's offset were processed again: duplicates. Small fetches make the first
 * batch end well before the zombie's commit.
 */
import { afterAll, describe, expect, it } from 'vitest'
import type { TransactionalPipeline } from '@tep/kafka'
import { createKafkaTestKit } from '../support/kafka-test-kit.ts'
import { readTopic, valuesByPartition } from '../support/read-topic.ts'
import {
  CommitCounter,
  loggerActingOn,
  PIPELINE_TEST_CONSUMER,
  pipelineKafka,
  pipelineTopics,
  produceInputs,
  startPipeline,
} from './pipeline-harness.ts'

const kit = createKafkaTestKit()
const running: TransactionalPipeline[] = []
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()))
  await kit.disconnectAll()
})

describe("a zombie whose commit reaches beyond the new owner's first fetched batch", () => {
  it('does not cause duplicates: the committed offset holds for the following batches too', async () => {
    const topics = await pipelineTopics(kit, 'txn-zombie-far', 1)
    // Six produce requests, six record batches of five: a fetch of one byte per
    // partition returns one record batch, so the new owner's first batch is v0..v4.
    const inputs: string[] = []
    for (let i = 0; i < 30; i += 5) inputs.push(...(await produceInputs(kit, topics.input, 5, i)))

    // The previous owner processed v0..v14 and is about to commit offset 15.
    const zombie = kit.producer(
      { transactionalId: `${topics.prefix}-previous-owner`, transactionTimeout: 60_000 },
    )
    await zombie.connect()
    const zombieTx = await zombie.transaction()
    await zombieTx.send({
      topic: topics.output,
      messages: Array.from({ length: 15 }, (_, i) => ({ key: `k${i}`, value: `out:v${i}` })),
    })
    await zombieTx.sendOffsets({
      consumerGroupId: topics.groupId,
      topics: [{ topic: topics.input, partitions: [{ partition: 0, offset: '15' }] }],
    })

    // The zombie commits after the new owner fetched from 0, before it commits anything:
    // while the new owner reads the committed offset with require_stable (KIP-447),
    // which waits for the zombie's open transaction.
    const kafka = pipelineKafka()
    let zombieCommitted = false
    const commitZombie = async () => {
      zombieCommitted = true
      await zombieTx.commit()
    }
    const onUnstable = loggerActingOn('committed offset unstable', commitZombie)
    const counter = new CommitCounter()
    const { pipeline, started } = startPipeline(
      kafka,
      topics,
      {
        transform: async (record) => ({
          topic: topics.output,
          key: record.key,
          value: Buffer.from(`out:${record.value?.toString()}`),
        }),
        consumer: { ...PIPELINE_TEST_CONSUMER, maxBytesPerPartition: 1 },
        logger: onUnstable,
      },
      { onCommitted: counter.hook },
    )
    running.push(pipeline)
    await started
    await counter.reach(15)
    await pipeline.stop()

    expect(zombieCommitted).toBe(true)
    expect(counter.events[0]?.firstOffset).toBe('15')
    expect(counter.committed).toBe(15)
    expect(valuesByPartition(await readTopic(kit.kafka, topics.output)).get(0)).toEqual(
      inputs.map((v) => `out:${v}`),
    )
  })
})
