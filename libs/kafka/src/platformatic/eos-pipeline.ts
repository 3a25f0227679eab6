import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import { PipelineError, errorCode } from '@tep/errors'
import {
  Consumer,
  FetchIsolationLevels,
  Producer,
  type GroupAssignment,
  type Message,
  type MessagesStream,
} from '@platformatic/kafka'
import { createDlqRecord } from '../dlq-record.ts'
import { KafkaConfigError, PipelineStoppedError } from '../errors.ts'
import { SILENT_LOGGER } from '../logger.ts'
import { mapInOrder, SKIPPED } from '../ordered-map.ts'
import type { OutputRecord, PipelineHooks, PipelineRecord, PipelineStatus, TopicPartition } from '../pipeline-types.ts'
import { backoffDelay, resolveRetryPolicy } from '../retry-policy.ts'
import type { TransactionalPipeline, TransactionalPipelineOptions } from '../transactional-pipeline.ts'
import { baseOptions, type KafkaConnection } from './connection.ts'
import { commitTransaction, toPipelineRecord, toWireMessage, type WireMessage } from './eos-transaction.ts'
import { FetchControl } from './fetch-control.ts'
import { newPartitionState, queuedCount, takeBatch, type PartitionState, type TakenRecords } from './partition-state.ts'
import { isGenerationError, isProducerFenced } from './protocol-errors.ts'
import { readStableOffsets } from './stable-offsets.ts'

/** Documented defaults of the @platformatic/kafka loop (see libs/kafka/README.md). */
export const EOS_DEFAULTS = {
  concurrency: 16,
  maxRecordsPerTransaction: 3_000,
  commitIntervalMs: 5,
  transactionTimeoutMs: 10_000,
} as const

type Outcome =
  | { kind: 'outputs'; record: PipelineRecord; outputs: OutputRecord[] }
  | { kind: 'dead-letter'; record: PipelineRecord; error: unknown }

interface Transformed {
  state: PartitionState
  epoch: number
  messages: Message[]
  outcomes: Outcome[]
  /** A systemic failure paused the partition after these outcomes. */
  failed: boolean
}

const isRecordFailure = (error: unknown) => error instanceof PipelineError && !error.retriable

/**
 * The exactly-once consume-transform-produce loop on @platformatic/kafka.
 *
 * One transactional producer per instance (`${transactionalIdPrefix}-${instanceId}`):
 * each transaction holds the records of every assigned partition that were
 * ready, and its offsets are committed with the group generation and member id
 * (KIP-447), so an instance that lost partitions in a rebalance cannot commit
 * them any more. The consumer stream keeps fetching while a batch is transformed
 * and the previous transaction commits (one commit at a time, the next batch
 * transformed meanwhile). Per partition, outputs keep the input order.
 * A systemic failure pauses only its partition (seek back, backoff); a failed
 * commit seeks every partition in it back. Before records of a partition are
 * taken after an assignment or a failure, its committed offset is read with
 * require_stable, which waits out any transaction still deciding it.
 */
export function createPlatformaticPipeline(
  options: TransactionalPipelineOptions,
  connection: KafkaConnection,
): TransactionalPipeline {
  const logger = options.logger ?? SILENT_LOGGER
  const hooks = options.hooks ?? {}
  const policy = resolveRetryPolicy(options.retryPolicy)
  const random = options.random ?? Math.random
  const concurrency = options.concurrency ?? EOS_DEFAULTS.concurrency
  const maxPerTxn = options.maxRecordsPerTransaction ?? EOS_DEFAULTS.maxRecordsPerTransaction
  const lingerMs = options.commitIntervalMs ?? EOS_DEFAULTS.commitIntervalMs
  if (!Number.isFinite(lingerMs) || lingerMs < 0)
    throw new KafkaConfigError(`commitIntervalMs must be >= 0, got ${lingerMs}`)
  const instanceId = options.instanceId ?? `${hostname()}-${randomBytes(4).toString('hex')}`
  const transactionalId = `${options.transactionalIdPrefix}-${instanceId}`
  const { groupId, dlqTopic, transform } = options
  const highWater = Math.max(4 * maxPerTxn, 1_000)

  let state: PipelineStatus['state'] = 'created'
  let crashed: PipelineStatus['crashed']
  let consumer: Consumer | undefined
  let producer: Producer | undefined
  let stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> | undefined
  let loop: Promise<void> | undefined
  let starting: Promise<void> | undefined
  let assigned: TopicPartition[] = []
  let assignmentWaiters: ((tps: TopicPartition[]) => void)[] = []
  const parts = new Map<string, PartitionState>()
  const fetchControl = new FetchControl()
  const stopController = new AbortController()
  let wakeUp: (() => void) | undefined
  const currentState = (): PipelineStatus['state'] => state

  function emit<K extends keyof PipelineHooks>(name: K, event: Parameters<NonNullable<PipelineHooks[K]>>[0]): void {
    const hook = hooks[name] as ((e: typeof event) => void) | undefined
    if (hook === undefined) return
    try {
      hook(event)
    } catch (err) {
      // A throwing metrics hook after a commit must not look like a failed commit.
      logger.error({ err, hook: name }, 'pipeline hook threw; ignored')
    }
  }

  function wake(): void {
    const w = wakeUp
    wakeUp = undefined
    w?.()
  }

  // --- partitions: seek, pause, floors -------------------------------------------------

  function seek(s: PartitionState, offset: bigint): void {
    s.epoch += 1
    s.queue = []
    s.position = offset
    fetchControl.seek(s.topic, s.partition, offset)
  }

  async function refreshFloors(states: PartitionState[]): Promise<void> {
    if (states.length === 0 || consumer === undefined) return
    const epochs = new Map(states.map((s) => [s, s.epoch]))
    let floors: Map<string, bigint | undefined>
    try {
      floors = await readStableOffsets(consumer, connection, states, stopController.signal, () =>
        logger.info(
          { partitions: states.map((s) => s.key) },
          'committed offset unstable: a transaction holding it is still open; waiting for its outcome',
        ),
      )
    } catch (err) {
      if (state !== 'running') return
      logger.warn({ err, partitions: states.map((s) => s.key) }, 'reading committed offsets failed; will retry')
      setTimeout(() => void refreshFloors(states.filter((s) => parts.get(s.key) === s && !s.floorKnown)), 1_000).unref()
      return
    }
    for (const s of states) {
      if (parts.get(s.key) !== s || s.epoch !== epochs.get(s)) continue
      const floor = floors.get(s.key)
      if (floor !== undefined) {
        const before = s.queue.length
        s.queue = s.queue.filter((m) => m.offset >= floor)
        if (s.queue.length < before)
          logger.info({ topic: s.topic, partition: s.partition, skipped: before - s.queue.length, committed: floor.toString() }, 'skipping records that are already committed')
        if (s.position === undefined || s.position < floor) s.position = floor
      }
      s.floorKnown = true
    }
    wake()
  }

  function pauseAndBackOff(s: PartitionState, fromOffset: bigint, error: unknown): void {
    s.failures += 1
    const code = errorCode(error)
    const retryAfterMs =
      error instanceof PipelineError && typeof error.details.retryAfterMs === 'number' ? error.details.retryAfterMs : undefined
    const delayMs = backoffDelay(policy, s.failures, random, retryAfterMs)
    const tp = { topic: s.topic, partition: s.partition }
    seek(s, fromOffset)
    s.paused = true
    s.floorKnown = false
    fetchControl.pause(s.topic, s.partition)
    s.pausedSince ??= Date.now()
    s.pausedCode = code
    if (s.resumeTimer !== undefined) clearTimeout(s.resumeTimer)
    s.resumeTimer = setTimeout(() => {
      s.resumeTimer = undefined
      if (state !== 'running' || parts.get(s.key) !== s) return
      s.paused = false
      fetchControl.resume(s.topic, s.partition)
      emit('onResumed', { ...tp, attempt: s.failures })
      logger.info({ ...tp, attempt: s.failures }, 'partition resumed after backoff')
      void refreshFloors([s])
    }, delayMs)
    s.resumeTimer.unref?.()
    logger.warn({ ...tp, offset: fromOffset.toString(), code, attempt: s.failures, delayMs, err: error }, 'systemic failure: partition paused, will redo')
    emit('onPaused', { ...tp, offset: fromOffset.toString(), error, code, attempt: s.failures, delayMs })
  }

  function onAssignment(assignments: GroupAssignment[] | undefined): void {
    const now = (assignments ?? []).flatMap((a) => a.partitions.map((partition) => ({ topic: a.topic, partition })))
    const keep = new Set(now.map((tp) => `${tp.topic}:${tp.partition}`))
    // Every fetch in flight belongs to the previous generation; the stream restarts each partition at its committed offset.
    fetchControl.invalidateAll()
    for (const [key, s] of parts) {
      if (s.resumeTimer !== undefined) clearTimeout(s.resumeTimer)
      s.epoch += 1
      if (!keep.has(key)) parts.delete(key)
    }
    for (const tp of now) parts.set(`${tp.topic}:${tp.partition}`, newPartitionState(tp.topic, tp.partition))
    assigned = now
    logger.info({ groupId, assigned: now }, 'partitions assigned')
    emit('onAssigned', { partitions: now })
    const waiters = assignmentWaiters
    assignmentWaiters = []
    for (const w of waiters) w(now)
    void refreshFloors([...parts.values()])
  }

  function onMessage(message: Message): void {
    const s = parts.get(`${message.topic}:${message.partition}`)
    if (s === undefined || s.paused) return
    if (s.position !== undefined && message.offset < s.position) return
    s.queue.push(message)
    s.position = message.offset + 1n
    if (queuedCount(parts.values()) >= highWater) stream?.pause()
    wake()
  }

  // --- the loop ---------------------------------------------------------------------------

  async function nextBatch(rotation: number): Promise<TakenRecords[]> {
    const ready = () => [...parts.values()].some((s) => s.queue.length > 0 && !s.paused && s.floorKnown)
    while (state === 'running' && !ready()) await new Promise<void>((resolve) => (wakeUp = resolve))
    if (state !== 'running') return []
    if (lingerMs > 0 && queuedCount(parts.values()) < maxPerTxn) {
      const deadline = Date.now() + lingerMs
      while (state === 'running' && queuedCount(parts.values()) < maxPerTxn && Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))
          wakeUp = () => {
            clearTimeout(timer)
            resolve()
          }
        })
      }
    }
    const batch = takeBatch([...parts.values()], maxPerTxn, rotation)
    if (queuedCount(parts.values()) < highWater / 2 && stream?.isPaused()) stream.resume()
    return batch
  }

  async function transformTaken(taken: TakenRecords): Promise<Transformed> {
    const s = taken.state
    const records = taken.messages.map(toPipelineRecord)
    let systemic = false
    const settled = await mapInOrder(
      records,
      concurrency,
      async (record) => {
        try {
          return await transform(record, { attempt: s.failures + 1, signal: stopController.signal })
        } catch (error) {
          if (!isRecordFailure(error)) systemic = true
          throw error
        }
      },
      () => !systemic && state === 'running' && s.epoch === taken.epoch,
    )
    const outcomes: Outcome[] = []
    let failure: { index: number; error: unknown } | undefined
    for (let i = 0; i < settled.length; i++) {
      const r = settled[i]!
      const record = records[i]!
      if (r.ok) {
        const v = r.value
        outcomes.push({ kind: 'outputs', record, outputs: v === undefined ? [] : Array.isArray(v) ? v : [v] })
      } else if (r.error !== SKIPPED && isRecordFailure(r.error)) {
        outcomes.push({ kind: 'dead-letter', record, error: r.error })
      } else {
        failure = { index: i, error: r.error === SKIPPED ? new PipelineStoppedError('pipeline is stopping') : r.error }
        break
      }
    }
    let epoch = taken.epoch
    const owned = parts.get(s.key) === s && s.epoch === taken.epoch
    if (failure !== undefined && state === 'running' && owned) {
      pauseAndBackOff(s, taken.messages[failure.index]!.offset, failure.error)
      epoch = s.epoch
    }
    return { state: s, epoch, messages: taken.messages, outcomes, failed: failure !== undefined }
  }

  async function ensureProducer(): Promise<Producer> {
    if (producer !== undefined) return producer
    const p = new Producer({
      ...baseOptions(connection, '-txn'),
      transactionalId,
      idempotent: true,
      acks: -1,
      // InitProducerId's transaction timeout is the client's `timeout`.
      timeout: options.transactionTimeoutMs ?? EOS_DEFAULTS.transactionTimeoutMs,
    })
    producer = p
    // InitProducerId now: it aborts whatever a previous process with this id left open.
    // -1/-1 ("no producer yet"): @platformatic/kafka 2.12.1 sends 0/0 by default,
    // which the coordinator takes for a stale epoch of an existing transactional id
    // and refuses (INVALID_PRODUCER_EPOCH), so a restarted instance could never start.
    const probe = await p.beginTransaction({ producerId: -1n, producerEpoch: -1 })
    await probe.cancel()
    return p
  }

  async function dropProducer(): Promise<void> {
    const p = producer
    producer = undefined
    await p?.close().catch((err: unknown) => logger.warn({ err }, 'producer close failed'))
  }

  async function commitBatch(batch: Transformed[], started: number): Promise<void> {
    const live = batch.filter((t) => t.outcomes.length > 0 && parts.get(t.state.key) === t.state && t.state.epoch === t.epoch)
    if (live.length === 0) return
    const writes: WireMessage[] = []
    const deadLettered = new Map<Transformed, { record: PipelineRecord; code: string; message: string }[]>()
    for (const t of live) {
      const dl: { record: PipelineRecord; code: string; message: string }[] = []
      for (const o of t.outcomes) {
        if (o.kind === 'outputs') for (const out of o.outputs) writes.push(toWireMessage(out))
        else {
          const dlq = createDlqRecord(dlqTopic, o.record, { error: o.error, attempts: t.state.failures + 1, consumerGroup: groupId })
          writes.push(toWireMessage(dlq))
          dl.push({ record: o.record, code: errorCode(o.error), message: o.error instanceof Error ? o.error.message : String(o.error) })
        }
      }
      deadLettered.set(t, dl)
    }
    try {
      const p = await ensureProducer()
      await commitTransaction(p, consumer!, writes, live.map((t) => t.messages[t.outcomes.length - 1]!))
    } catch (error) {
      await dropProducer()
      for (const t of live) emit('onAborted', { topic: t.state.topic, partition: t.state.partition, reason: 'commit failed', error })
      if (isProducerFenced(error)) logger.error({ err: error, transactionalId }, 'producer fenced: another instance uses this transactional id')
      if (state !== 'running') return
      for (const t of live) {
        const s = t.state
        if (parts.get(s.key) !== s) continue
        if (isGenerationError(error)) {
          // The group moved on: the next assignment restarts the partition from its stable committed offset.
          seek(s, t.messages[0]!.offset)
          s.floorKnown = false
          void refreshFloors([s])
        } else pauseAndBackOff(s, t.messages[0]!.offset, error)
      }
      return
    }
    for (const t of live) {
      const s = t.state
      if (!t.failed) {
        s.failures = 0
        s.pausedSince = undefined
        s.pausedCode = ''
      }
      const dl = deadLettered.get(t) ?? []
      for (const d of dl) {
        logger.warn({ topic: s.topic, partition: s.partition, offset: d.record.offset, code: d.code, error: d.message }, 'record sent to the DLQ')
        emit('onDeadLettered', { topic: s.topic, partition: s.partition, offset: d.record.offset, code: d.code, message: d.message })
      }
      const outputs = t.outcomes.reduce((n, o) => n + (o.kind === 'outputs' ? o.outputs.length : 0), 0)
      emit('onCommitted', {
        topic: s.topic,
        partition: s.partition,
        records: t.outcomes.length,
        outputs,
        deadLettered: dl.length,
        firstOffset: t.outcomes[0]!.record.offset,
        lastOffset: t.outcomes[t.outcomes.length - 1]!.record.offset,
        durationMs: Date.now() - started,
      })
    }
  }

  async function runLoop(): Promise<void> {
    let committing: Promise<void> = Promise.resolve()
    let rotation = 0
    while (state === 'running') {
      const taken = await nextBatch(rotation++)
      if (taken.length === 0) continue
      const started = Date.now()
      const transformed = await Promise.all(taken.map(transformTaken))
      // One transaction at a time; this batch was transformed while the previous one committed.
      await committing
      committing = commitBatch(transformed, started).catch((err: unknown) => logger.error({ err }, 'commit step failed'))
    }
    await committing
  }

  return {
    start() {
      if (state !== 'created') return Promise.reject(new KafkaConfigError(`start() called on a pipeline that is ${state}`))
      state = 'starting'
      starting = startClients()
      return starting
    },

    async stop() {
      if (state === 'stopped' || state === 'stopping') return
      if (state === 'created') {
        state = 'stopped'
        return
      }
      state = 'stopping'
      stopController.abort(new PipelineStoppedError('pipeline stopping'))
      for (const s of parts.values()) if (s.resumeTimer !== undefined) clearTimeout(s.resumeTimer)
      wake()
      // start() gives up at its next step; the batch in flight commits what finished.
      await starting?.catch(() => undefined)
      await loop
      await closeClients()
      parts.clear()
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
        paused: [...parts.values()]
          .filter((s) => s.pausedSince !== undefined)
          .map((s) => ({ topic: s.topic, partition: s.partition, since: s.pausedSince!, attempt: s.failures, code: s.pausedCode })),
        ...(crashed === undefined ? {} : { crashed }),
      }
    },
  }

  async function startClients(): Promise<void> {
      const c = options.consumer ?? {}
      consumer = new Consumer({
        ...baseOptions(connection, '-consumer'),
        groupId,
        sessionTimeout: c.sessionTimeout ?? 30_000,
        heartbeatInterval: c.heartbeatInterval ?? 3_000,
        ...(c.rebalanceTimeout === undefined ? {} : { rebalanceTimeout: c.rebalanceTimeout }),
        isolationLevel: FetchIsolationLevels.READ_COMMITTED,
        autocommit: false,
        maxWaitTime: c.maxWaitTimeInMs ?? 200,
        ...(c.maxBytesPerPartition === undefined ? {} : { maxBytesPerPartition: c.maxBytesPerPartition }),
        ...(c.maxBytes === undefined ? {} : { maxBytes: c.maxBytes }),
      })
      fetchControl.install(consumer)
      consumer.on('consumer:group:join', (payload) => onAssignment(payload.assignments))
      try {
        await ensureProducer()
        const metadata = await consumer.metadata({ topics: options.topics })
        for (const topic of options.topics) {
          const id = metadata.topics.get(topic)?.id
          if (id !== undefined) fetchControl.setTopicId(topic, id)
        }
        if (currentState() !== 'starting') throw new PipelineStoppedError('the pipeline was stopped while it was starting')
        state = 'running'
        stream = await consumer.consume({
          topics: options.topics,
          mode: 'committed',
          fallbackMode: options.fromBeginning === false ? 'latest' : 'earliest',
          autocommit: false,
          highWaterMark: 1_024,
        })
        fetchControl.attach(stream.offsetsToFetch)
        stream.on('data', onMessage)
        stream.on('error', (error: Error) => {
          if (state !== 'running') return
          logger.error({ err: error }, 'consumer stream failed')
          crashed = { message: error.message, at: Date.now() }
          emit('onCrash', { error, restart: false })
        })
        if (currentState() !== 'running') throw new PipelineStoppedError('the pipeline was stopped while it was starting')
        loop = runLoop().catch((error: unknown) => {
          crashed = { message: error instanceof Error ? error.message : String(error), at: Date.now() }
          logger.error({ err: error }, 'pipeline loop crashed')
          emit('onCrash', { error, restart: false })
        })
      } catch (err) {
        const stoppedMeanwhile = currentState() === 'stopping' || currentState() === 'stopped'
        if (stoppedMeanwhile && err instanceof PipelineStoppedError) return
        await closeClients()
        state = 'stopped'
        throw err
      }
  }

  async function closeClients(): Promise<void> {
    await stream?.close().catch((err: unknown) => logger.warn({ err }, 'stream close failed'))
    // close() leaves the group, so the partitions move at once instead of after the session timeout.
    await consumer?.close().catch((err: unknown) => logger.warn({ err }, 'consumer close failed'))
    await dropProducer()
  }
}
