import { PipelineError, errorCode } from '@tep/errors'
import type {
  Admin,
  Consumer,
  ConsumerConfig,
  EachBatchPayload,
  Kafka,
  KafkaMessage,
  Message,
  Producer,
  TopicMessages,
} from 'kafkajs'
import { createDlqRecord } from './dlq-record.ts'
import { KafkaConfigError, PipelineStoppedError } from './errors.ts'
import { kafkaConnectionOf, transactionalProducerConfig } from './kafka-client.ts'
import { createPlatformaticPipeline } from './platformatic/eos-pipeline.ts'
import { SILENT_LOGGER, type KafkaLogger } from './logger.ts'
import { mapInOrder, SKIPPED, type Settled } from './ordered-map.ts'
import type {
  OutputRecord,
  PipelineHooks,
  PipelineRecord,
  PipelineStatus,
  TopicPartition,
  Transform,
} from './pipeline-types.ts'
import { backoffDelay, resolveRetryPolicy, type RetryPolicy } from './retry-policy.ts'

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
  /** Where records with a record-specific (non-retriable) failure go, original bytes untouched. */
  dlqTopic: string
  /** Records of one partition transformed at the same time; default 16. */
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

export interface TransactionalPipeline {
  /** Connects, subscribes and starts consuming; resolves once the consumer runs (not yet assigned). */
  start(): Promise<void>
  /** Stops fetching, lets the in-flight batch commit or abort, disconnects every client. Idempotent. */
  stop(): Promise<void>
  /** Resolves at the next partition assignment (or the current one if already assigned). */
  whenAssigned(): Promise<TopicPartition[]>
  status(): PipelineStatus
}

interface PartitionState {
  readonly topic: string
  readonly partition: number
  readonly transactionalId: string
  producer: Producer | undefined
  /** Generation the producer was created in; a new assignment needs a new producer (fencing). */
  producerGeneration: number
  /**
   * The group's committed offset as read after fencing or after a failure. Records
   * below it were committed by an earlier attempt or owner and are skipped, in the
   * batch at hand and in later ones: it can lie beyond the batch that was fetched
   * (a zombie committed more than one fetch holds). Cleared once consumption reaches it.
   */
  floor: bigint | undefined
  /** Read the committed offset again before the next batch (set by every pause). */
  recheckFloor: boolean
  /**
   * The offset a commit whose outcome is unknown would have committed: EndTxn was
   * sent but its answer never came, so the broker may have committed it.
   */
  uncertainNext: bigint | undefined
  /** Consecutive systemic failures. */
  failures: number
  pausedSince: number | undefined
  pausedCode: string
  resumeTimer: NodeJS.Timeout | undefined
}

type Outcome =
  | { kind: 'outputs'; record: PipelineRecord; outputs: OutputRecord[] }
  | { kind: 'dead-letter'; record: PipelineRecord; error: unknown }

/**
 * KafkaJS answers CONCURRENT_TRANSACTIONS (the previous EndTxn's markers are still
 * being written) by retrying after its default 300 ms; starting at 5 ms keeps
 * back-to-back transactions of one partition a few ms apart (measured on the dev
 * broker: about 11 ms per small transaction instead of about 30 ms at 20 ms).
 * The delays double up to 5 s and give up after about 30 s in all, so a dead
 * broker surfaces as a systemic failure instead of hanging the batch.
 */
const PRODUCER_RETRY = { initialRetryTime: 5, maxRetryTime: 5_000, retries: 15 }

/**
 * After a commit with an unknown outcome, how long the committed offset is read
 * again until it shows that commit. Fencing (InitProducerId) settles the outcome,
 * but Kafka's group coordinator applies a transaction's offsets to what
 * OffsetFetch answers only after the commit markers are written, and KafkaJS
 * 2.2.4 cannot ask for stable offsets only (KIP-447 require_stable). If the offset
 * does not get there, the commit was aborted and the records are redone.
 */
const UNCERTAIN_COMMIT_WAIT_MS = 3_000
const UNCERTAIN_COMMIT_POLL_MS = 50

const DEFAULTS = {
  concurrency: 16,
  partitionsConsumedConcurrently: 1,
  maxRecordsPerTransaction: 500,
  transactionTimeoutMs: 60_000,
}

/** True for failures that belong to one record (DLQ); everything else is systemic (pause, back off, redo). */
export function isRecordFailure(error: unknown): boolean {
  return error instanceof PipelineError && !error.retriable
}

function toRecord(topic: string, partition: number, message: KafkaMessage): PipelineRecord {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key ?? null,
    value: message.value ?? null,
    headers: message.headers ?? {},
    timestamp: message.timestamp,
  }
}

function nextOffset(offset: string): string {
  return (BigInt(offset) + 1n).toString()
}

function validate(options: TransactionalPipelineOptions): void {
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
 */
export function createTransactionalPipeline(options: TransactionalPipelineOptions): TransactionalPipeline {
  validate(options)
  // The client comes with the connection (createKafka's `client`, from KAFKA_CLIENT in services).
  const connection = kafkaConnectionOf(options.kafka)
  if (connection?.client === 'platformatic') return createPlatformaticPipeline(options, connection)
  const logger = options.logger ?? SILENT_LOGGER
  const hooks = options.hooks ?? {}
  const policy = resolveRetryPolicy(options.retryPolicy)
  const random = options.random ?? Math.random
  const concurrency = options.concurrency ?? DEFAULTS.concurrency
  const maxPerTxn = options.maxRecordsPerTransaction ?? DEFAULTS.maxRecordsPerTransaction
  const transactionTimeout = options.transactionTimeoutMs ?? DEFAULTS.transactionTimeoutMs
  const { kafka, groupId, dlqTopic, transform } = options

  let state: PipelineStatus['state'] = 'created'
  let consumer: Consumer | undefined
  let admin: Admin | undefined
  let generation = 0
  let assigned: TopicPartition[] = []
  let crashed: PipelineStatus['crashed']
  const partitions = new Map<string, PartitionState>()
  const stopController = new AbortController()
  let assignmentWaiters: ((tps: TopicPartition[]) => void)[] = []
  let removeListeners: (() => void)[] = []

  /**
   * Calls a hook without letting it break the pipeline: a throwing metrics hook
   * after a commit must not be mistaken for a failed commit (that would redo,
   * and so duplicate, committed records).
   */
  function emit<K extends keyof PipelineHooks>(
    name: K,
    event: Parameters<NonNullable<PipelineHooks[K]>>[0],
  ): void {
    const hook = hooks[name] as ((e: typeof event) => void) | undefined
    if (hook === undefined) return
    try {
      hook(event)
    } catch (err) {
      logger.error({ err, hook: name }, 'pipeline hook threw; ignored')
    }
  }

  // Read through a function: stop() changes the state while start() awaits, which
  // TypeScript's narrowing inside start() cannot see.
  const currentState = (): PipelineStatus['state'] => state
  const keyOf = (topic: string, partition: number) => `${topic}\u0000${partition}`

  function partitionState(topic: string, partition: number): PartitionState {
    const key = keyOf(topic, partition)
    let ps = partitions.get(key)
    if (ps === undefined) {
      ps = {
        topic,
        partition,
        transactionalId: `${options.transactionalIdPrefix}-${topic}-${partition}`,
        producer: undefined,
        producerGeneration: -1,
        floor: undefined,
        recheckFloor: false,
        uncertainNext: undefined,
        failures: 0,
        pausedSince: undefined,
        pausedCode: '',
        resumeTimer: undefined,
      }
      partitions.set(key, ps)
    }
    return ps
  }

  async function closeProducer(ps: PartitionState): Promise<void> {
    const producer = ps.producer
    ps.producer = undefined
    ps.producerGeneration = -1
    if (producer !== undefined) {
      // A transaction left open is aborted by the broker when the next owner
      // initialises the same transactional id, or after transactionTimeout.
      await producer
        .disconnect()
        .catch((err: unknown) =>
          logger.warn({ err, transactionalId: ps.transactionalId }, 'producer disconnect failed'),
        )
    }
  }

  function clearPause(ps: PartitionState): void {
    if (ps.resumeTimer !== undefined) clearTimeout(ps.resumeTimer)
    ps.resumeTimer = undefined
    if (ps.pausedSince !== undefined) {
      ps.pausedSince = undefined
      consumer?.resume([{ topic: ps.topic, partitions: [ps.partition] }])
    }
  }

  /** The group's committed offset of the partition; `undefined` when none. */
  async function fetchCommitted(ps: PartitionState): Promise<bigint | undefined> {
    const offsets = await admin!.fetchOffsets({ groupId, topics: [ps.topic] })
    const committed = offsets
      .find((t) => t.topic === ps.topic)
      ?.partitions.find((p) => p.partition === ps.partition)?.offset
    return committed === undefined || BigInt(committed) < 0n ? undefined : BigInt(committed)
  }

  /**
   * Reads the committed offset into `ps.floor`. After a commit with an unknown
   * outcome it reads again for a while until the offset shows that commit (see
   * UNCERTAIN_COMMIT_WAIT_MS); a redo of committed records would duplicate them.
   */
  async function refreshFloor(ps: PartitionState): Promise<void> {
    const uncertain = ps.uncertainNext
    const deadline = Date.now() + UNCERTAIN_COMMIT_WAIT_MS
    let floor = await fetchCommitted(ps)
    while (
      uncertain !== undefined &&
      (floor === undefined || floor < uncertain) &&
      Date.now() < deadline &&
      state === 'running'
    ) {
      await new Promise((resolve) => setTimeout(resolve, UNCERTAIN_COMMIT_POLL_MS))
      floor = await fetchCommitted(ps)
    }
    if (uncertain !== undefined)
      logger.info(
        {
          topic: ps.topic,
          partition: ps.partition,
          uncertain: uncertain.toString(),
          committed: floor?.toString(),
          outcome: floor !== undefined && floor >= uncertain ? 'committed' : 'aborted',
        },
        'outcome of the commit whose answer was lost',
      )
    ps.floor = floor
    ps.recheckFloor = false
    ps.uncertainNext = undefined
  }

  /**
   * Producer of the partition for the current generation. A new one fences the
   * previous owner first, and only then is the committed offset read (`ps.floor`),
   * so a zombie's last commit is seen. The offset is read again after any failure.
   */
  async function ensureProducer(ps: PartitionState): Promise<Producer> {
    if (ps.producer !== undefined && ps.producerGeneration === generation) {
      if (ps.recheckFloor || ps.uncertainNext !== undefined) await refreshFloor(ps)
      return ps.producer
    }
    if (ps.producer !== undefined) await closeProducer(ps)
    const producer = kafka.producer(
      transactionalProducerConfig(ps.transactionalId, { transactionTimeout, retry: PRODUCER_RETRY }),
    )
    // Owned by the partition before connecting, so a failure below still closes it.
    ps.producer = producer
    ps.producerGeneration = generation
    await producer.connect()
    // Fence: the first transaction() runs InitProducerId for this transactional id.
    const probe = await producer.transaction()
    await probe.abort()
    await refreshFloor(ps)
    logger.debug(
      { transactionalId: ps.transactionalId, committed: ps.floor?.toString() },
      'transactional producer ready (previous owner fenced)',
    )
    return producer
  }

  function toKafkaMessage(output: OutputRecord): Message {
    const message: Message = { key: output.key, value: output.value }
    if (output.headers !== undefined) message.headers = output.headers
    if (output.partition !== undefined) message.partition = output.partition
    return message
  }

  /** Groups messages per topic, keeping their order (KafkaJS keeps per-partition order within a topic's list). */
  function groupByTopic(records: { topic: string; message: Message }[]): TopicMessages[] {
    const byTopic = new Map<string, Message[]>()
    for (const { topic, message } of records) {
      let list = byTopic.get(topic)
      if (list === undefined) {
        list = []
        byTopic.set(topic, list)
      }
      list.push(message)
    }
    return [...byTopic].map(([topic, messages]) => ({ topic, messages }))
  }

  async function commitOutcomes(
    ps: PartitionState,
    producer: Producer,
    outcomes: Outcome[],
    payload: EachBatchPayload,
    started: number,
  ): Promise<void> {
    const writes: { topic: string; message: Message }[] = []
    let outputs = 0
    const deadLettered: { record: PipelineRecord; code: string; message: string }[] = []
    for (const outcome of outcomes) {
      if (outcome.kind === 'outputs') {
        for (const out of outcome.outputs) writes.push({ topic: out.topic, message: toKafkaMessage(out) })
        outputs += outcome.outputs.length
      } else {
        const { record, error } = outcome
        const dlq = createDlqRecord(dlqTopic, record, {
          error,
          attempts: ps.failures + 1,
          consumerGroup: groupId,
        })
        writes.push({ topic: dlq.topic, message: { key: dlq.key, value: dlq.value, headers: dlq.headers } })
        deadLettered.push({
          record,
          code: errorCode(error),
          message: error instanceof Error ? error.message : String(error),
        })
      }
    }
    const first = outcomes[0]!.record
    const last = outcomes[outcomes.length - 1]!.record
    const tx = await producer.transaction()
    let endTxnSent = false
    try {
      if (writes.length > 0) await tx.sendBatch({ topicMessages: groupByTopic(writes) })
      await tx.sendOffsets({
        consumerGroupId: groupId,
        topics: [
          { topic: ps.topic, partitions: [{ partition: ps.partition, offset: nextOffset(last.offset) }] },
        ],
      })
      if (payload.isStale())
        throw new PipelineStoppedError(
          `partition ${ps.topic}/${ps.partition} was sought or revoked during the batch`,
        )
      endTxnSent = true
      await tx.commit()
    } catch (err) {
      // A commit that failed after EndTxn went out may have happened all the same.
      if (endTxnSent) ps.uncertainNext = BigInt(nextOffset(last.offset))
      await tx.abort().catch(() => undefined)
      throw err
    }
    payload.resolveOffset(last.offset)
    // Healthy again: clear the failure state before any hook observes status().
    ps.failures = 0
    ps.pausedSince = undefined
    ps.pausedCode = ''
    for (const d of deadLettered) {
      logger.warn(
        { topic: ps.topic, partition: ps.partition, offset: d.record.offset, code: d.code, error: d.message },
        'record sent to the DLQ',
      )
      emit('onDeadLettered', {
        topic: ps.topic,
        partition: ps.partition,
        offset: d.record.offset,
        code: d.code,
        message: d.message,
      })
    }
    emit('onCommitted', {
      topic: ps.topic,
      partition: ps.partition,
      records: outcomes.length,
      outputs,
      deadLettered: deadLettered.length,
      firstOffset: first.offset,
      lastOffset: last.offset,
      durationMs: Date.now() - started,
    })
  }

  function pauseAndBackOff(
    ps: PartitionState,
    payload: EachBatchPayload,
    fromOffset: string,
    error: unknown,
  ): void {
    ps.failures += 1
    const code = errorCode(error)
    const retryAfterMs =
      error instanceof PipelineError && typeof error.details.retryAfterMs === 'number'
        ? error.details.retryAfterMs
        : undefined
    const delayMs = backoffDelay(policy, ps.failures, random, retryAfterMs)
    const tp = { topic: ps.topic, partition: ps.partition }
    // Re-read from the first record whose outcome was not committed, and read the
    // committed offset again before redoing anything.
    consumer!.seek({ ...tp, offset: fromOffset })
    ps.recheckFloor = true
    payload.pause()
    ps.pausedSince ??= Date.now()
    ps.pausedCode = code
    if (ps.resumeTimer !== undefined) clearTimeout(ps.resumeTimer)
    ps.resumeTimer = setTimeout(() => {
      ps.resumeTimer = undefined
      if (state !== 'running') return
      consumer?.resume([{ topic: ps.topic, partitions: [ps.partition] }])
      emit('onResumed', { ...tp, attempt: ps.failures })
      logger.info({ ...tp, attempt: ps.failures }, 'partition resumed after backoff')
    }, delayMs)
    ps.resumeTimer.unref?.()
    logger.warn(
      { ...tp, offset: fromOffset, code, attempt: ps.failures, delayMs, err: error },
      'systemic failure: partition paused, will redo',
    )
    emit('onPaused', { ...tp, offset: fromOffset, error, code, attempt: ps.failures, delayMs })
  }

  async function processChunk(
    ps: PartitionState,
    producer: Producer,
    records: PipelineRecord[],
    payload: EachBatchPayload,
  ): Promise<'done' | 'failed'> {
    const started = Date.now()
    let systemic = false
    const heartbeat = setInterval(() => {
      payload
        .heartbeat()
        .catch((err: unknown) => logger.debug({ err }, 'heartbeat during batch failed (rebalance pending)'))
    }, 1_000)
    let settled: Settled<OutputRecord[] | OutputRecord | undefined | void>[]
    try {
      settled = await mapInOrder(
        records,
        concurrency,
        async (record) => {
          try {
            return await transform(record, { attempt: ps.failures + 1, signal: stopController.signal })
          } catch (error) {
            // Stop starting new records at the first systemic failure: they would be redone anyway.
            if (!isRecordFailure(error)) systemic = true
            throw error
          }
        },
        () => !systemic && state === 'running',
      )
    } finally {
      clearInterval(heartbeat)
    }
    // Outcomes in input order, up to (not including) the first systemic failure.
    const outcomes: Outcome[] = []
    let failure: { index: number; error: unknown } | undefined
    for (let i = 0; i < settled.length; i++) {
      const s = settled[i]!
      const record = records[i]!
      if (s.ok) {
        const v = s.value
        outcomes.push({ kind: 'outputs', record, outputs: v === undefined ? [] : Array.isArray(v) ? v : [v] })
      } else if (s.error !== SKIPPED && isRecordFailure(s.error)) {
        outcomes.push({ kind: 'dead-letter', record, error: s.error })
      } else {
        failure = {
          index: i,
          error: s.error === SKIPPED ? new PipelineStoppedError('pipeline is stopping') : s.error,
        }
        break
      }
    }
    if (outcomes.length > 0) {
      try {
        await commitOutcomes(ps, producer, outcomes, payload, started)
      } catch (error) {
        // The transaction is aborted: nothing of it is visible. Start over with a
        // new producer (a failed one may be fenced or in an unknown state).
        emit('onAborted', { topic: ps.topic, partition: ps.partition, reason: 'commit failed', error })
        await closeProducer(ps)
        if (state !== 'running' || payload.isStale()) return 'failed'
        pauseAndBackOff(ps, payload, records[0]!.offset, error)
        return 'failed'
      }
    }
    if (failure !== undefined) {
      if (state !== 'running') return 'failed'
      pauseAndBackOff(ps, payload, records[failure.index]!.offset, failure.error)
      return 'failed'
    }
    return 'done'
  }

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload
    const ps = partitionState(batch.topic, batch.partition)
    if (state !== 'running' || payload.isStale() || batch.messages.length === 0) return
    let producer: Producer
    try {
      producer = await ensureProducer(ps)
    } catch (error) {
      await closeProducer(ps)
      if (state === 'running' && !payload.isStale())
        pauseAndBackOff(ps, payload, batch.messages[0]!.offset, error)
      return
    }
    let records = batch.messages.map((m) => toRecord(batch.topic, batch.partition, m))
    if (ps.floor !== undefined) {
      const floor = ps.floor
      const skipped = records.filter((r) => BigInt(r.offset) < floor)
      if (skipped.length > 0) {
        // Committed by an earlier attempt whose answer was lost, or by a previous
        // owner after this instance fetched its start offset.
        logger.info(
          { topic: ps.topic, partition: ps.partition, skipped: skipped.length, committed: floor.toString() },
          'skipping records that are already committed',
        )
        payload.resolveOffset(skipped[skipped.length - 1]!.offset)
        records = records.filter((r) => BigInt(r.offset) >= floor)
      }
      // Kept while the whole batch lay below it: the next batch may too.
      if (records.length > 0) ps.floor = undefined
    }
    for (let i = 0; i < records.length; i += maxPerTxn) {
      if (state !== 'running' || payload.isStale()) return
      const result = await processChunk(ps, producer, records.slice(i, i + maxPerTxn), payload)
      if (result === 'failed' || ps.producer === undefined) return
    }
  }

  function onGroupJoin(memberAssignment: Record<string, number[]>): void {
    generation += 1
    const now: TopicPartition[] = Object.entries(memberAssignment).flatMap(([topic, ps]) =>
      ps.map((partition) => ({ topic, partition })),
    )
    const keep = new Set(now.map((tp) => keyOf(tp.topic, tp.partition)))
    for (const [key, ps] of partitions) {
      if (keep.has(key)) continue
      // Revoked: forget its backoff (a paused partition must not stay paused if it comes back) and close its producer.
      clearPause(ps)
      partitions.delete(key)
      void closeProducer(ps)
    }
    assigned = now
    logger.info({ groupId, assigned: now }, 'partitions assigned')
    emit('onAssigned', { partitions: now })
    const waiters = assignmentWaiters
    assignmentWaiters = []
    for (const w of waiters) w(now)
  }

  return {
    async start() {
      if (state !== 'created') throw new KafkaConfigError(`start() called on a pipeline that is ${state}`)
      state = 'starting'
      admin = kafka.admin()
      consumer = kafka.consumer({
        sessionTimeout: 30_000,
        heartbeatInterval: 3_000,
        ...options.consumer,
        groupId,
        readUncommitted: false,
        allowAutoTopicCreation: false,
      })
      removeListeners.push(
        consumer.on(consumer.events.GROUP_JOIN, (e) => onGroupJoin(e.payload.memberAssignment)),
        consumer.on(consumer.events.CRASH, (e) => {
          logger.error({ err: e.payload.error, restart: e.payload.restart }, 'consumer crashed')
          if (!e.payload.restart) crashed = { message: e.payload.error.message, at: Date.now() }
          emit('onCrash', { error: e.payload.error, restart: e.payload.restart })
        }),
      )
      try {
        await admin.connect()
        await consumer.connect()
        await consumer.subscribe({ topics: options.topics, fromBeginning: options.fromBeginning ?? true })
        // stop() may have been called while connecting; it owns the shutdown then.
        if (currentState() !== 'starting')
          throw new PipelineStoppedError('the pipeline was stopped while it was starting')
        state = 'running'
        await consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently:
            options.partitionsConsumedConcurrently ?? DEFAULTS.partitionsConsumedConcurrently,
          eachBatch,
        })
      } catch (err) {
        const stoppedMeanwhile = currentState() === 'stopping' || currentState() === 'stopped'
        await consumer.disconnect().catch(() => undefined)
        await admin.disconnect().catch(() => undefined)
        if (stoppedMeanwhile && err instanceof PipelineStoppedError) return
        state = 'stopped'
        throw err
      }
    },

    async stop() {
      if (state === 'stopped' || state === 'stopping') return
      if (state === 'created') {
        state = 'stopped'
        return
      }
      state = 'stopping'
      stopController.abort(new PipelineStoppedError('pipeline stopping'))
      for (const ps of partitions.values()) {
        if (ps.resumeTimer !== undefined) clearTimeout(ps.resumeTimer)
        ps.resumeTimer = undefined
      }
      // disconnect() stops the fetch loop and waits for the batch in flight,
      // which commits what finished and leaves the rest uncommitted.
      await consumer?.disconnect().catch((err: unknown) => logger.warn({ err }, 'consumer disconnect failed'))
      for (const remove of removeListeners) remove()
      removeListeners = []
      await Promise.all([...partitions.values()].map((ps) => closeProducer(ps)))
      partitions.clear()
      await admin?.disconnect().catch((err: unknown) => logger.warn({ err }, 'admin disconnect failed'))
      state = 'stopped'
    },

    whenAssigned() {
      if (assigned.length > 0) return Promise.resolve(assigned)
      return new Promise((resolve) => assignmentWaiters.push(resolve))
    },

    status() {
      return {
        state,
        assigned: [...assigned],
        paused: [...partitions.values()]
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
