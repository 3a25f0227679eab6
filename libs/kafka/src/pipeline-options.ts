import { PipelineError } from '@tep/errors'
import type { ConsumerConfig, Kafka } from 'kafkajs'
import { KafkaConfigError } from './errors.ts'
import type { KafkaLogger } from './logger.ts'
import type { PipelineHooks, Transform } from './pipeline-types.ts'
import type { RetryPolicy } from './retry-policy.ts'

export interface TransactionalPipelineOptions {
  kafka: Kafka
  groupId: string
  /** Input topics (one consumer group over all of them). */
  topics: string[]
  /**
   * Prefix of the transactional ids, unique per service. KafkaJS: one per input
   * partition, `${prefix}-${topic}-${partition}` (the same on every instance and
   * across restarts: that is what fences zombies). @platformatic/kafka: one per
   * instance, `${prefix}-${instanceId}` (zombies are fenced by the group generation, KIP-447).
   */
  transactionalIdPrefix: string
  /**
   * @platformatic/kafka only: this instance's stable name (pod name, replica
   * ordinal). A restart with the same name aborts at once the transaction its
   * predecessor left open; with the default (host name + random) that waits for
   * the transaction timeout. Two live instances must never share it.
   */
  instanceId?: string
  /**
   * @platformatic/kafka only: how long a transaction waits for more records when
   * fewer than maxRecordsPerTransaction are ready, ms; default 5.
   */
  commitIntervalMs?: number
  transform: Transform
  /** Where records with a record-specific (non-retriable) failure go: original bytes, card numbers masked (same length). */
  dlqTopic: string
  /**
   * Records of one partition transformed at the same time; default 16. On
   * @platformatic/kafka the loop has one budget of concurrency ×
   * partitionsConsumedConcurrently records over all assigned partitions.
   */
  concurrency?: number
  /** Partitions processed at the same time (KafkaJS partitionsConsumedConcurrently); default 1. */
  partitionsConsumedConcurrently?: number
  /** Largest number of input records committed in one transaction; default 500 (KafkaJS, per partition), 3,000 (@platformatic/kafka, all partitions). */
  maxRecordsPerTransaction?: number
  retryPolicy?: Partial<RetryPolicy>
  /** Kafka transaction timeout, ms; default 60 000 (KafkaJS), 10 000 (@platformatic/kafka). */
  transactionTimeoutMs?: number
  /** Read a topic from the beginning when the group has no committed offset; default true (no record is skipped). */
  fromBeginning?: boolean
  /** Extra consumer settings (session timeout, heartbeat, fetch sizes); groupId and isolation are fixed. */
  consumer?: Omit<Partial<ConsumerConfig>, 'groupId' | 'readUncommitted' | 'allowAutoTopicCreation'>
  logger?: KafkaLogger
  hooks?: PipelineHooks
  /** Random source of the backoff jitter (tests). */
  random?: () => number
}

export const PIPELINE_DEFAULTS = {
  concurrency: 16,
  partitionsConsumedConcurrently: 1,
  maxRecordsPerTransaction: 500,
  transactionTimeoutMs: 60_000,
}

/** True for failures that belong to one record (DLQ); everything else is systemic (pause, back off, redo). */
export function isRecordFailure(error: unknown): boolean {
  return error instanceof PipelineError && !error.retriable
}

/** Throws one KafkaConfigError naming every invalid option at once. */
export function validatePipelineOptions(options: TransactionalPipelineOptions): void {
  const problems: string[] = []
  if (options.topics.length === 0) problems.push('topics must name at least one input topic')
  if (options.groupId.length === 0) problems.push('groupId must not be empty')
  if (options.transactionalIdPrefix.length === 0) problems.push('transactionalIdPrefix must not be empty')
  if (options.dlqTopic.length === 0) problems.push('dlqTopic must not be empty')
  if (options.topics.includes(options.dlqTopic))
    problems.push(`dlqTopic ${options.dlqTopic} must not be an input topic`)
  for (const key of ['concurrency', 'partitionsConsumedConcurrently', 'maxRecordsPerTransaction'] as const) {
    const value = options[key]
    if (value !== undefined && (!Number.isInteger(value) || value < 1))
      problems.push(`${key} must be a positive integer, got ${value}`)
  }
  if (problems.length > 0)
    throw new KafkaConfigError(`invalid transactional pipeline options: ${problems.join('; ')}`)
}
