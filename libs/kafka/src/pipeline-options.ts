import { PipelineError } from '@tep/errors'
import type { Kafka } from './kafka-client.ts'
import { KafkaConfigError } from './errors.ts'
import type { KafkaLogger } from './logger.ts'
import type { WriterSchemaLookup } from './pan-masking.ts'
import type { PipelineHooks, Transform } from './pipeline-types.ts'
import type { RetryPolicy } from './retry-policy.ts'

/** Consumer timings of the loop, in the names KafkaJS gave them (ms and bytes). */
export interface PipelineConsumerSettings {
  /** Default 30 000. */
  sessionTimeout?: number
  /** Default 3 000. */
  heartbeatInterval?: number
  rebalanceTimeout?: number
  /** How long a fetch waits for records; default 200. */
  maxWaitTimeInMs?: number
  /** Bytes of one partition in a fetch answer; default 1 MiB (the Java consumer's max.partition.fetch.bytes). */
  maxBytesPerPartition?: number
  /** Bytes of one fetch answer; default 8 MiB (an answer is parsed at once). */
  maxBytes?: number
}

export interface TransactionalPipelineOptions {
  /** A client made by createKafka: the loop's @platformatic/kafka clients use its brokers, client id and security. */
  kafka: Kafka
  groupId: string
  /** Input topics (one consumer group over all of them). */
  topics: string[]
  /**
   * Prefix of the transactional id, unique per service: one per instance,
   * `${prefix}-${instanceId}` (zombies are fenced by the group generation, KIP-447).
   */
  transactionalIdPrefix: string
  /**
   * This instance's stable name (pod name, replica ordinal). A restart with the
   * same name aborts at once the transaction its predecessor left open; with the
   * default (host name + random) that waits for the transaction timeout. Two live
   * instances must never share it.
   */
  instanceId?: string
  /** How long a transaction waits for more records when fewer than maxRecordsPerTransaction are ready, ms; default 5. */
  commitIntervalMs?: number
  transform: Transform
  /** Where records with a record-specific (non-retriable) failure go: the original record, card numbers masked (dlq-record.ts). */
  dlqTopic: string
  /**
   * The writer schema of a Confluent Avro value's id when known without waiting
   * (AvroSerde.knownWriterType): DLQ values are then masked field by field instead
   * of as bytes. Default: as bytes.
   */
  dlqValueSchema?: WriterSchemaLookup
  /**
   * Records transformed at the same time: the loop has one budget of
   * concurrency × partitionsConsumedConcurrently records over all assigned
   * partitions, any of which may use all of it; default 16.
   */
  concurrency?: number
  /** Multiplies `concurrency` into the loop's budget of records in flight; default 1. */
  partitionsConsumedConcurrently?: number
  /** Largest number of input records committed in one transaction, over all assigned partitions; default 10,000. */
  maxRecordsPerTransaction?: number
  retryPolicy?: Partial<RetryPolicy>
  /** Kafka transaction timeout, ms; default 10 000. */
  transactionTimeoutMs?: number
  /** Read a topic from the beginning when the group has no committed offset; default true (no record is skipped). */
  fromBeginning?: boolean
  /**
   * A fetch offset outside the partition's log (records removed before they were read, or a
   * truncated log): `reset` (default) reads on from the log start (or its end when not
   * `fromBeginning`), as Kafka's auto.offset.reset does, logged as an error with the offsets
   * skipped; `hold` stops reading that partition, for a caller that must not skip records
   * (the backfill). Both tell `hooks.onOffsetOutOfRange`.
   */
  offsetOutOfRange?: 'reset' | 'hold'
  /** Consumer settings of the loop (eos-options.ts); groupId and isolation are fixed. */
  consumer?: PipelineConsumerSettings
  logger?: KafkaLogger
  hooks?: PipelineHooks
  /** Random source of the backoff jitter (tests). */
  random?: () => number
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
  if (options.offsetOutOfRange !== undefined && options.offsetOutOfRange !== 'reset' && options.offsetOutOfRange !== 'hold')
    problems.push(`offsetOutOfRange must be 'reset' or 'hold', got ${String(options.offsetOutOfRange)}`)
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
