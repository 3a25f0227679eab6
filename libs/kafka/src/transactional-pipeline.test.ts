import { PipelineError } from '@tep/errors'
import type { Kafka } from './kafka-client.ts'
import { describe, expect, it } from 'vitest'
import { KafkaConfigError } from './errors.ts'
import { createKafka } from './kafka-client.ts'
import { isRecordFailure, type TransactionalPipelineOptions } from './pipeline-options.ts'
import { createTransactionalPipeline } from './transactional-pipeline.ts'

// Never connected: these tests stop before start() or fail in the option checks.
const base: TransactionalPipelineOptions = {
  kafka: createKafka({ brokers: ['127.0.0.1:9'], clientId: 'unit' }),
  groupId: 'g',
  topics: ['in'],
  transactionalIdPrefix: 'p',
  dlqTopic: 'dlq',
  transform: async () => undefined,
}

describe('isRecordFailure', () => {
  it('sends only non-retriable PipelineErrors to the DLQ', () => {
    expect(isRecordFailure(new PipelineError('bad input', { code: 'BAD' }))).toBe(true)
    expect(isRecordFailure(new PipelineError('503', { code: 'DOWN', retriable: true }))).toBe(false)
    expect(isRecordFailure(new TypeError('undefined is not a function'))).toBe(false)
    expect(isRecordFailure('string thrown')).toBe(false)
  })
})

describe('createTransactionalPipeline options', () => {
  it('names every invalid option at once', () => {
    let caught: unknown
    try {
      createTransactionalPipeline({
        ...base,
        topics: ['in', 'dlq'],
        transactionalIdPrefix: '',
        concurrency: 0,
        maxRecordsPerTransaction: 1.5,
      })
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(KafkaConfigError)
    expect((caught as Error).message).toBe(
      'invalid transactional pipeline options: transactionalIdPrefix must not be empty; dlqTopic dlq must not be an input topic; concurrency must be a positive integer, got 0; maxRecordsPerTransaction must be a positive integer, got 1.5',
    )
  })

  it('needs a client made by createKafka (the loop reads its connection settings)', () => {
    expect(() => createTransactionalPipeline({ ...base, kafka: {} as Kafka })).toThrow(
      /needs a Kafka client made by createKafka/,
    )
  })

  it('can be stopped before it was started, and reports its state', async () => {
    const pipeline = createTransactionalPipeline(base)
    expect(pipeline.status()).toEqual({ state: 'created', assigned: [], paused: [] })
    await pipeline.stop()
    expect(pipeline.status().state).toBe('stopped')
    await expect(pipeline.start()).rejects.toThrow(/start\(\) called on a pipeline that is stopped/)
  })
})
