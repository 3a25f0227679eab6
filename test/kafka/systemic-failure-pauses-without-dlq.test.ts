import { PipelineError } from '@tep/errors'
import { afterAll, describe, expect, it } from 'vitest'
import type { PausedEvent, PipelineStatus, TransactionalPipeline } from '@tep/kafka'
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

class ApiUnavailableError extends PipelineError {
  constructor() {
    super('enrichment API answered 503', {
      code: 'ENRICHMENT_UNAVAILABLE',
      retriable: true,
      details: { retryAfterMs: 30 },
    })
  }
}

describe('systemic failures', () => {
  it.each([
    ['a retriable PipelineError', () => new ApiUnavailableError(), 'ENRICHMENT_UNAVAILABLE'],
    ['an unknown error', () => new TypeError('socket hang up'), 'UNEXPECTED'],
  ])(
    '%s pauses the partition, backs off and redoes it; nothing goes to the DLQ',
    async (_name, makeError, code) => {
      const topics = await pipelineTopics(kit, 'systemic', 1)
      await produceInputs(kit, topics.input, 20)
      // The "API" is down for the first three calls that reach record v7.
      let outageCalls = 0
      const paused: PausedEvent[] = []
      const statusWhilePaused: PipelineStatus[] = []
      let resumed = 0
      const counter = new CommitCounter()
      const holder: { pipeline?: TransactionalPipeline } = {}
      const started = startPipeline(
        pipelineKafka(),
        topics,
        {
          concurrency: 4,
          retryPolicy: { initialDelayMs: 20, maxDelayMs: 200, multiplier: 2, jitter: 0.5 },
          transform: async (record) => {
            if (record.value?.toString() === 'v7' && outageCalls < 3) {
              outageCalls++
              throw makeError()
            }
            return {
              topic: topics.output,
              key: record.key,
              value: Buffer.from(`out:${record.value?.toString()}`),
            }
          },
        },
        {
          onCommitted: counter.hook,
          onPaused: (e) => {
            paused.push(e)
            statusWhilePaused.push(holder.pipeline!.status())
          },
          onResumed: () => resumed++,
        },
      )
      const pipeline = started.pipeline
      holder.pipeline = pipeline
      running.push(pipeline)
      await started.started
      await counter.reach(20)
      const statusAfter = pipeline.status()
      await pipeline.stop()

      expect(paused.map((p) => [p.offset, p.code, p.attempt])).toEqual([
        ['7', code, 1],
        ['7', code, 2],
        ['7', code, 3],
      ])
      expect(paused.every((p) => p.delayMs > 0)).toBe(true)
      expect(resumed).toBe(3)
      expect(statusWhilePaused[0]?.paused).toEqual([
        expect.objectContaining({ topic: topics.input, partition: 0, attempt: 1, code }),
      ])
      expect(statusAfter.paused).toEqual([])

      // Every record exactly once, in order; the DLQ stayed empty (not even aborted writes).
      const outputs = valuesByPartition(await readTopic(kit.kafka, topics.output))
      expect(outputs.get(0)).toEqual(Array.from({ length: 20 }, (_, i) => `out:v${i}`))
      expect(await readTopic(kit.kafka, topics.dlq, { readUncommitted: true })).toEqual([])
    },
  )
})
