import { PipelineError, errorCode } from '@tep/errors'
import type { GroupAssignment } from '@platformatic/kafka'
import { KafkaConfigError, PipelineStoppedError } from '../errors.ts'
import { SILENT_LOGGER } from '../logger.ts'
import { hookEmitter } from './hook-emitter.ts'
import type { PipelineStatus, TopicPartition } from '../pipeline-types.ts'
import { backoffDelay, resolveRetryPolicy } from '../retry-policy.ts'
import type { TransactionalPipelineOptions } from '../pipeline-options.ts'
import type { TransactionalPipeline } from '../pipeline-types.ts'
import type { KafkaConnection } from './connection.ts'
import { ProducerSlot } from './producer-slot.ts'
import { WakeSignal } from './wake-signal.ts'
import { EosConsumer } from './eos-consumer.ts'
import { PartitionPump } from './partition-pump.ts'
import { EOS_DEFAULTS, resolveEosSettings } from './eos-options.ts'
import { commitTransaction, transactionWrites } from './eos-transaction.ts'
import { FetchControl } from './fetch-control.ts'
import { isPlaceholderStart, outOfRangeEvent, outOfRangeMessage, withLogOffsets } from './out-of-range.ts'
import { newPartitionState, type PartitionState, type Taken } from './partition-state.ts'
import { CommitCadence } from './commit-cadence.ts'
import { isGenerationError, isProducerFenced } from './protocol-errors.ts'
import { readStableOffsets } from './stable-offsets.ts'
import { TxnOffsetCommitter } from './txn-offset-commit.ts'
import { reportCommitted } from './commit-report.ts'
import { ConsumerRecovery } from './consumer-recovery.ts'
import { pipelineTracing } from './pipeline-tracing.ts'

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
 *
 * A consumer the client gave up on (a broker failover) is re-created in place,
 * from the committed offsets: consumer-recovery.ts.
 */
export function createPlatformaticPipeline(
  options: TransactionalPipelineOptions,
  connection: KafkaConnection,
): TransactionalPipeline {
  const logger = options.logger ?? options.kafka.logger ?? SILENT_LOGGER
  const hooks = options.hooks ?? {}
  const policy = resolveRetryPolicy(options.retryPolicy)
  const random = options.random ?? Math.random
  const { maxInFlight, maxPerTxn, lingerMs, transactionalId, highWater } = resolveEosSettings(options)
  const { groupId, dlqTopic } = options
  // Undefined without a tracer provider: then the transform and the commit run as they are, untouched.
  const tracing = pipelineTracing(groupId, transactionalId)
  const transform = tracing === undefined ? options.transform : tracing.wrap(options.transform)

  let state: PipelineStatus['state'] = 'created'
  let crashed: PipelineStatus['crashed']
  /** The group member; its consumer and stream are read through it, so a replaced one is never used. */
  let current: EosConsumer | undefined
  const producer = new ProducerSlot(connection, transactionalId, options.transactionTimeoutMs ?? EOS_DEFAULTS.transactionTimeoutMs, logger)
  let loop: Promise<void> | undefined
  let starting: Promise<void> | undefined
  let assigned: TopicPartition[] = []
  let assignmentWaiters: ((tps: TopicPartition[]) => void)[] = []
  const parts = new Map<string, PartitionState>()
  const fetchControl = new FetchControl({
    onOutOfRange: (e) => {
      if (isPlaceholderStart(e, parts.get(`${e.topic}:${e.partition}`)?.fromPlaceholder === true)) return false
      const hold = options.offsetOutOfRange === 'hold'
      const fallback = options.fromBeginning === false ? 'latest' : 'earliest'
      void withLogOffsets(e, () => current?.consumer, stopController.signal, logger).then((known) => {
        const event = outOfRangeEvent(known, { fallback, hold })
        logger.error({ ...event }, outOfRangeMessage(event))
        emit('onOffsetOutOfRange', event)
      })
      return hold
    },
  })
  const offsetCommitter = new TxnOffsetCommitter(connection)
  const stopController = new AbortController()
  const commitWake = new WakeSignal() // the commit loop waits on it for finished records
  /** Records from the fetches into each partition's window, through the transform, to `done`. */
  const pumps = new PartitionPump(transform, stopController.signal, { maxInFlight, maxPerTxn, highWater }, {
    parts,
    isRunning: () => state === 'running',
    pauseAndBackOff: (s, offset, error) => pauseAndBackOff(s, offset, error),
    finished: () => commitWake.wake(),
    stream: () => current?.stream,
  })
  const cadence = new CommitCadence(
    {
      parts,
      isRunning: () => state === 'running',
      inflight: () => pumps.inflight,
      backlogged: () => current?.stream?.isPaused() === true || [...parts.values()].some((s) => s.queue.length > 0),
    },
    commitWake,
    { maxPerTxn, lingerMs },
  )
  const currentState = (): PipelineStatus['state'] => state
  let committing: Promise<void> | undefined // awaited before its consumer is replaced
  const recovery = new ConsumerRecovery({
    logger,
    policy,
    random,
    signal: stopController.signal,
    isRunning: () => state === 'running',
    quiesce: async () => {
      await committing?.catch(() => undefined)
      revokeAll() // first: no partition of the old consumer can be taken into a transaction once it is gone
      await closeConsumer()
    },
    reopen: () => openConsumer(),
    onFailed: (reason, error) => {
      crashed = { message: `${reason}: ${error instanceof Error ? error.message : String(error)}`, at: Date.now() }
      emit('onCrash', { error, restart: true })
    },
    onRecovered: (event) => ((crashed = undefined), emit('onRecovered', event)),
  })

  const emit = hookEmitter(hooks, logger)

  // --- partitions: seek, pause, floors -------------------------------------------------

  /** Re-reads the partition from `offset`: what was received from there on is dropped, what finished before it stays to be committed. */
  function seek(s: PartitionState, offset: bigint): void {
    s.epoch += 1
    s.queue.clear()
    s.window = []
    s.done = s.done.filter((d) => d.message.offset < offset)
    s.position = offset
    s.fromPlaceholder = false
    fetchControl.seek(s.topic, s.partition, offset)
  }

  async function refreshFloors(states: PartitionState[]): Promise<void> {
    const consumer = current?.consumer
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
      if (s.restartAtFloor) {
        s.restartAtFloor = false
        // No committed offset: from the beginning (the stream recovers an offset out of range to the earliest).
        const start = floor ?? (options.fromBeginning === false ? undefined : 0n)
        if (start !== undefined) seek(s, start)
        s.fromPlaceholder = floor === undefined
      } else if (floor !== undefined) {
        const skipped = s.queue.dropBelow(floor)
        if (skipped > 0)
          logger.info({ topic: s.topic, partition: s.partition, skipped, committed: floor.toString() }, 'skipping records that are already committed')
        if (s.position === undefined || s.position < floor) s.position = floor
      }
      s.floorKnown = true
      pumps.pump(s)
    }
  }

  function pauseAndBackOff(s: PartitionState, fromOffset: bigint, error: unknown): void {
    s.failures += 1
    s.failedAt = fromOffset
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
    retireParts(new Set(now.map((tp) => `${tp.topic}:${tp.partition}`)))
    for (const tp of now) parts.set(`${tp.topic}:${tp.partition}`, newPartitionState(tp.topic, tp.partition))
    assigned = now
    logger.info({ groupId, assigned: now }, 'partitions assigned')
    emit('onAssigned', { partitions: now })
    const waiters = assignmentWaiters
    assignmentWaiters = []
    for (const w of waiters) w(now)
    void refreshFloors([...parts.values()])
  }

  /**
   * Every fetch in flight belongs to the previous assignment, and the work of every
   * partition is dropped (a new epoch): kept partitions restart at their committed
   * offset, the others are forgotten.
   */
  function retireParts(keep: ReadonlySet<string>): void {
    fetchControl.invalidateAll()
    for (const [key, s] of parts) {
      if (s.resumeTimer !== undefined) clearTimeout(s.resumeTimer)
      s.epoch += 1
      if (!keep.has(key)) parts.delete(key)
    }
  }

  /** Every partition given up (the consumer is being replaced): in-flight work is dropped, nothing of it is committed. */
  function revokeAll(): void {
    retireParts(new Set())
    if (assigned.length > 0) {
      assigned = []
      emit('onAssigned', { partitions: [] })
    }
  }

  // --- transactions: one at a time, over every partition ----------------------------------

  async function nextTaken(rotation: number): Promise<Taken[]> {
    const taken = await cadence.next(rotation)
    for (const t of taken) pumps.pump(t.state)
    return taken
  }

  async function commitTaken(taken: Taken[]): Promise<void> {
    const started = Date.now()
    const live = taken.filter((t) => parts.get(t.state.key) === t.state && t.state.epoch === t.epoch)
    // No consumer: it is being replaced and its partitions were given up (not live any more).
    const consumer = current?.consumer
    if (live.length === 0 || consumer === undefined) return
    const { writes, deadLettered } = transactionWrites(live, dlqTopic, groupId, options.dlqValueSchema)
    try {
      const p = await producer.get()
      const lastRecords = live.map((t) => t.done[t.done.length - 1]!.message)
      if (tracing === undefined) await commitTransaction(p, consumer, offsetCommitter, writes, lastRecords)
      else await tracing.commit(live, writes.length, () => commitTransaction(p, consumer, offsetCommitter, writes, lastRecords))
    } catch (error) {
      await producer.drop()
      for (const t of live) emit('onAborted', { topic: t.state.topic, partition: t.state.partition, reason: 'commit failed', error })
      // A fenced epoch has two causes: another instance initialised this transactional id
      // (a zombie of ours was replaced), or the coordinator aborted the open transaction
      // itself, e.g. after a broker failover left it past its timeout (seen in the fault
      // suite's broker kills). Both are recovered from the same way, and the log must not
      // send an operator looking for a second instance that may not exist.
      if (isProducerFenced(error))
        logger.warn({ err: error, transactionalId }, 'producer fenced (another instance took this transactional id, or the coordinator aborted the transaction); the records are redone with a new producer')
      if (state !== 'running') return
      for (const t of live) {
        const s = t.state
        if (parts.get(s.key) !== s) continue
        const from = t.done[0]!.message.offset
        if (isGenerationError(error)) {
          // The group moved on: redo from the stable committed offset (the next assignment does too).
          seek(s, from)
          s.floorKnown = false
          void refreshFloors([s])
        } else pauseAndBackOff(s, from, error)
      }
      return
    }
    reportCommitted(live, deadLettered, started, emit, logger)
  }

  /**
   * Commits transformed records one transaction at a time while transforms go on
   * (the consumer stream keeps fetching, each partition's window keeps filling).
   * After stop() it waits for the transforms in flight and commits what finished.
   */
  async function runLoop(): Promise<void> {
    let rotation = 0
    for (;;) {
      const taken = await nextTaken(rotation++)
      if (taken.length === 0) {
        if (state !== 'running' && pumps.inflight === 0) return
        continue
      }
      committing = commitTaken(taken)
      await committing
      committing = undefined
    }
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
      commitWake.wake()
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
    try {
      await producer.get()
      if (currentState() !== 'starting') throw new PipelineStoppedError('the pipeline was stopped while it was starting')
      state = 'running'
      await openConsumer()
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

  /** A new group member (eos-consumer.ts); its failures go to the recovery, which replaces it. */
  async function openConsumer(): Promise<void> {
    const session = new EosConsumer({ connection, groupId, topics: options.topics, consumer: options.consumer, fromBeginning: options.fromBeginning }, fetchControl, {
      onAssignment,
      onRecords: (topic, partition, messages) => pumps.onRecords(topic, partition, messages),
      onFailure: (reason, error) => {
        if (state === 'running') recovery.failed(reason, error)
      },
    })
    current = session
    await session.open()
  }

  async function closeConsumer(): Promise<void> {
    const session = current
    current = undefined
    await session?.close(logger)
  }

  async function closeClients(): Promise<void> {
    await recovery.settled()
    // close() leaves the group, so the partitions move at once instead of after the session timeout.
    await closeConsumer()
    await producer.drop()
    await offsetCommitter.close()
  }
}

