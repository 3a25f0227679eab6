import { eachBatch } from './batch-worker.ts'
import { KafkaConfigError, PipelineStoppedError } from './errors.ts'
import { kafkaConnectionOf } from './kafka-client.ts'
import { clearPause } from './partition-backoff.ts'
import { partitionKey } from './partition-state.ts'
import { PipelineContext } from './pipeline-context.ts'
import { createPlatformaticPipeline } from './platformatic/eos-pipeline.ts'
import {
  PIPELINE_DEFAULTS,
  validatePipelineOptions,
  type TransactionalPipelineOptions,
} from './pipeline-options.ts'
import type { PipelineStatus, TopicPartition } from './pipeline-types.ts'
import { closeProducer } from './producer-fencing.ts'

export interface TransactionalPipeline {
  /** Connects, subscribes and starts consuming; resolves once the consumer runs (not yet assigned). */
  start(): Promise<void>
  /** Stops fetching, lets the in-flight batch commit or abort, disconnects every client. Idempotent. */
  stop(): Promise<void>
  /** Resolves at the next partition assignment (or the current one if already assigned). */
  whenAssigned(): Promise<TopicPartition[]>
  status(): PipelineStatus
}

/**
 * A transactional consume-transform-produce loop (exactly-once within Kafka).
 *
 * For each batch of one input partition: transform the records with bounded
 * concurrency, keep the outcomes in input order, then in ONE Kafka transaction
 * write the outputs and DLQ records and commit the consumer offset (last + 1).
 * A read-committed reader therefore sees every input's outputs exactly once, or
 * nothing of an aborted attempt, which is redone.
 *
 * Zombie fencing (KafkaJS 2.2.4 has no KIP-447 consumer-group fencing): one
 * transactional producer per input partition, transactionalId
 * `${prefix}-${topic}-${partition}`, created on the first batch after each
 * assignment. Its InitProducerId bumps the epoch, which aborts any transaction a
 * previous owner left open and makes that owner's later commits fail. Only after
 * that, the committed offset is read back, and records below it (committed by a
 * previous owner after this instance fetched its starting offset) are skipped.
 *
 * Where each part lives: options and their checks in pipeline-options.ts, the
 * shared state in pipeline-context.ts and partition-state.ts, the per-partition
 * batch worker in batch-worker.ts, the transaction in transaction-commit.ts,
 * fencing in producer-fencing.ts, committed-offset recovery in
 * committed-offset.ts, pause and backoff in partition-backoff.ts. This file
 * keeps the lifecycle: start, stop, assignment, status.
 */
export function createTransactionalPipeline(options: TransactionalPipelineOptions): TransactionalPipeline {
  validatePipelineOptions(options)
  // The client comes with the connection (createKafka's `client`, from KAFKA_CLIENT in services).
  const connection = kafkaConnectionOf(options.kafka)
  if (connection?.client === 'platformatic') return createPlatformaticPipeline(options, connection)
  const ctx = new PipelineContext(options)
  const { kafka, groupId, logger } = ctx

  let assigned: TopicPartition[] = []
  let crashed: PipelineStatus['crashed']
  let assignmentWaiters: ((tps: TopicPartition[]) => void)[] = []
  let removeListeners: (() => void)[] = []

  // Read through a function: stop() changes the state while start() awaits, which
  // TypeScript's narrowing inside start() cannot see.
  const currentState = (): PipelineStatus['state'] => ctx.state

  function onGroupJoin(memberAssignment: Record<string, number[]>): void {
    ctx.generation += 1
    const now: TopicPartition[] = Object.entries(memberAssignment).flatMap(([topic, ps]) =>
      ps.map((partition) => ({ topic, partition })),
    )
    const keep = new Set(now.map((tp) => partitionKey(tp.topic, tp.partition)))
    for (const [key, ps] of ctx.partitions) {
      if (keep.has(key)) continue
      // Revoked: forget its backoff (a paused partition must not stay paused if it comes back) and close its producer.
      clearPause(ctx, ps)
      ctx.partitions.delete(key)
      void closeProducer(ctx, ps)
    }
    assigned = now
    logger.info({ groupId, assigned: now }, 'partitions assigned')
    ctx.emit('onAssigned', { partitions: now })
    const waiters = assignmentWaiters
    assignmentWaiters = []
    for (const w of waiters) w(now)
  }

  return {
    async start() {
      if (ctx.state !== 'created')
        throw new KafkaConfigError(`start() called on a pipeline that is ${ctx.state}`)
      ctx.state = 'starting'
      const admin = kafka.admin()
      const consumer = kafka.consumer({
        sessionTimeout: 30_000,
        heartbeatInterval: 3_000,
        ...options.consumer,
        groupId,
        readUncommitted: false,
        allowAutoTopicCreation: false,
      })
      ctx.admin = admin
      ctx.consumer = consumer
      removeListeners.push(
        consumer.on(consumer.events.GROUP_JOIN, (e) => onGroupJoin(e.payload.memberAssignment)),
        consumer.on(consumer.events.CRASH, (e) => {
          logger.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed')
          if (!e.payload.restart) crashed = { message: e.payload.error.message, at: Date.now() }
          ctx.emit('onCrash', { error: e.payload.error, restart: e.payload.restart })
        }),
      )
      try {
        await admin.connect()
        await consumer.connect()
        await consumer.subscribe({ topics: options.topics, fromBeginning: options.fromBeginning ?? true })
        // stop() may have been called while connecting; it owns the shutdown then.
        if (currentState() !== 'starting')
          throw new PipelineStoppedError('the pipeline was stopped while it was starting')
        ctx.state = 'running'
        await consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently:
            options.partitionsConsumedConcurrently ?? PIPELINE_DEFAULTS.partitionsConsumedConcurrently,
          eachBatch: (payload) => eachBatch(ctx, payload),
        })
      } catch (err) {
        const stoppedMeanwhile = currentState() === 'stopping' || currentState() === 'stopped'
        await consumer.disconnect().catch(() => undefined)
        await admin.disconnect().catch(() => undefined)
        if (stoppedMeanwhile && err instanceof PipelineStoppedError) return
        ctx.state = 'stopped'
        throw err
      }
    },

    async stop() {
      if (ctx.state === 'stopped' || ctx.state === 'stopping') return
      if (ctx.state === 'created') {
        ctx.state = 'stopped'
        return
      }
      ctx.state = 'stopping'
      ctx.stopController.abort(new PipelineStoppedError('pipeline stopping'))
      for (const ps of ctx.partitions.values()) {
        if (ps.resumeTimer !== undefined) clearTimeout(ps.resumeTimer)
        ps.resumeTimer = undefined
      }
      // disconnect() stops the fetch loop and waits for the batch in flight,
      // which commits what finished and leaves the rest uncommitted.
      await ctx.consumer
        ?.disconnect()
        .catch((err: unknown) => logger.warn({ err }, 'consumer disconnect failed'))
      for (const remove of removeListeners) remove()
      removeListeners = []
      await Promise.all([...ctx.partitions.values()].map((ps) => closeProducer(ctx, ps)))
      ctx.partitions.clear()
      await ctx.admin?.disconnect().catch((err: unknown) => logger.warn({ err }, 'admin disconnect failed'))
      ctx.state = 'stopped'
    },

    whenAssigned() {
      if (assigned.length > 0) return Promise.resolve(assigned)
      return new Promise((resolve) => assignmentWaiters.push(resolve))
    },

    status() {
      return {
        state: ctx.state,
        assigned: [...assigned],
        paused: [...ctx.partitions.values()]
          .filter((ps) => ps.pausedSince !== undefined)
          .map((ps) => ({
            topic: ps.topic,
            partition: ps.partition,
            since: ps.pausedSince!,
            attempt: ps.failures,
            code: ps.pausedCode,
          })),
        ...(crashed === undefined ? {} : { crashed }),
      }
    },
  }
}

/** Starts a transactional pipeline and returns it running. */
export async function runTransactionalPipeline(
  options: TransactionalPipelineOptions,
): Promise<TransactionalPipeline> {
  const pipeline = createTransactionalPipeline(options)
  await pipeline.start()
  return pipeline
}
