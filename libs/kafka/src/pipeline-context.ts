import type { Admin, Consumer, Kafka } from 'kafkajs'
import { SILENT_LOGGER, type KafkaLogger } from './logger.ts'
import { newPartitionState, partitionKey, type PartitionState } from './partition-state.ts'
import { PIPELINE_DEFAULTS, type TransactionalPipelineOptions } from './pipeline-options.ts'
import type { PipelineHooks, PipelineStatus, Transform } from './pipeline-types.ts'
import { resolveRetryPolicy, type RetryPolicy } from './retry-policy.ts'

/**
 * The state one transactional pipeline shares between its parts (lifecycle,
 * batch worker, commit step, fencing, backoff): the resolved options, the
 * clients, the group generation and the per-partition states. One instance per
 * pipeline; the parts are plain functions taking it as their first argument.
 */
export class PipelineContext {
  readonly options: TransactionalPipelineOptions
  readonly kafka: Kafka
  readonly groupId: string
  readonly dlqTopic: string
  readonly transform: Transform
  readonly logger: KafkaLogger
  readonly hooks: PipelineHooks
  readonly policy: RetryPolicy
  readonly random: () => number
  readonly concurrency: number
  readonly maxPerTxn: number
  readonly transactionTimeout: number

  state: PipelineStatus['state'] = 'created'
  consumer: Consumer | undefined
  admin: Admin | undefined
  /** Bumped at every group join; a producer of an older generation is replaced (fencing). */
  generation = 0
  readonly partitions = new Map<string, PartitionState>()
  readonly stopController = new AbortController()

  constructor(options: TransactionalPipelineOptions) {
    this.options = options
    this.kafka = options.kafka
    this.groupId = options.groupId
    this.dlqTopic = options.dlqTopic
    this.transform = options.transform
    this.logger = options.logger ?? SILENT_LOGGER
    this.hooks = options.hooks ?? {}
    this.policy = resolveRetryPolicy(options.retryPolicy)
    this.random = options.random ?? Math.random
    this.concurrency = options.concurrency ?? PIPELINE_DEFAULTS.concurrency
    this.maxPerTxn = options.maxRecordsPerTransaction ?? PIPELINE_DEFAULTS.maxRecordsPerTransaction
    this.transactionTimeout = options.transactionTimeoutMs ?? PIPELINE_DEFAULTS.transactionTimeoutMs
  }

  /**
   * Calls a hook without letting it break the pipeline: a throwing metrics hook
   * after a commit must not be mistaken for a failed commit (that would redo,
   * and so duplicate, committed records).
   */
  emit<K extends keyof PipelineHooks>(name: K, event: Parameters<NonNullable<PipelineHooks[K]>>[0]): void {
    const hook = this.hooks[name] as ((e: typeof event) => void) | undefined
    if (hook === undefined) return
    try {
      hook(event)
    } catch (err) {
      this.logger.error({ err, hook: name }, 'pipeline hook threw; ignored')
    }
  }

  /** The state of a partition, created on first sight. */
  partitionState(topic: string, partition: number): PartitionState {
    const key = partitionKey(topic, partition)
    let ps = this.partitions.get(key)
    if (ps === undefined) {
      ps = newPartitionState(this.options.transactionalIdPrefix, topic, partition)
      this.partitions.set(key, ps)
    }
    return ps
  }
}
