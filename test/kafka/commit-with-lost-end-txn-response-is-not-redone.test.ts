/**
 * Regression guard for the "commit outcome unknown" window: the broker commits a
 * transaction (outputs + offsets) but its EndTxn answer never reaches the client.
 * KafkaJS does not retry EndTxn, so the pipeline sees a failed commit, seeks back
 * and redoes the batch. The redo must find the committed offset (read again after
 * fencing with a new producer) and skip what the lost commit already wrote:
 * every input has exactly one output.
 */
import { Kafka, logLevel } from 'kafkajs'
import { afterAll, describe, expect, inject, it } from 'vitest'
import type { TransactionalPipeline } from '@tep/kafka'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { readTopic, valuesByPartition } from '../support/read-topic.ts'
import { waitFor } from '../support/wait-for.ts'
import { API_KEYS, loseFirstResponse } from './lost-response.ts'
import { memoryLogger, pipelineTopics, produceInputs, startPipeline } from './pipeline-harness.ts'

const kit = createKafkaTestKit()
const running: TransactionalPipeline[] = []
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()))
  await kit.disconnectAll()
})

describe('a commit whose EndTxn response is lost', () => {
  it('is not redone: the committed offset read after fencing skips its records', async () => {
    const topics = await pipelineTopics(kit, 'txn-lost-endtxn', 1)
    const values = await produceInputs(kit, topics.input, 30)
    const fault = loseFirstResponse(API_KEYS.endTxn)
    const kafka = new Kafka({
      clientId: uniqueName('lossy-pipeline'),
      brokers: inject('kafkaBrokers'),
      logLevel: logLevel.NOTHING,
      socketFactory: fault.socketFactory,
    })
    const aborted: unknown[] = []
    const logger = memoryLogger()
    const { pipeline, started } = startPipeline(
      kafka,
      topics,
      {
        transform: async (record) => ({
          topic: topics.output,
          key: record.key,
          value: Buffer.from(`out:${record.value?.toString()}`),
        }),
        maxRecordsPerTransaction: 10,
        retryPolicy: { initialDelayMs: 50, maxDelayMs: 200 },
        logger,
      },
      { onAborted: (e) => aborted.push(e.error) },
    )
    running.push(pipeline)
    await started

    const admin = kit.admin()
    await admin.connect()
    await waitFor(
      'the group to commit every input offset',
      async () => {
        const [offsets] = await admin.fetchOffsets({ groupId: topics.groupId, topics: [topics.input] })
        return offsets?.partitions[0]?.offset === String(values.length)
      },
      { timeoutMs: 60_000 },
    )
    await pipeline.stop()

    // The fault hit a commit the broker performed, and the pipeline took it for a failure.
    expect(fault.dropped()).toBe(true)
    expect(aborted.length, logger.lines.join('\n')).toBeGreaterThan(0)
    expect(valuesByPartition(await readTopic(kit.kafka, topics.output)).get(0)).toEqual(
      values.map((v) => `out:${v}`),
    )
  })
})
