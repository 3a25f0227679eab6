import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { Consumer, FetchIsolationLevels, type GroupAssignment } from '@platformatic/kafka'
import type { Kafka } from '../kafka-client.ts'
import { KafkaConfigError } from '../errors.ts'
import { requireConnection } from '../kafka-client.ts'
import { SILENT_LOGGER, type KafkaLogger } from '../logger.ts'
import type { TopicPartition } from '../pipeline-types.ts'
import { baseOptions } from './connection.ts'
import { hasProtocolError } from './protocol-errors.ts'
import { TopicReader, type ReadBatch } from './topic-reader.ts'
import { abortableDelay } from '../abortable-delay.ts'

/**
 * What one fetch brought for one assigned partition (a TopicReader batch:
 * committed records in offset order, maybe none when the fetch held only a
 * transaction marker, and `nextOffset` past everything read, markers included).
 */
export interface ReplayBatch extends ReadBatch {
  /** Aborted when this assignment ends (rebalance, lost membership, stop): give up retries then. */
  signal: AbortSignal
}

/** Documented defaults of createReplayingGroupMember (libs/kafka/README.md). */
export const REPLAYING_MEMBER_DEFAULTS = {
  sessionTimeoutMs: 30_000,
  heartbeatIntervalMs: 3_000,
  rebalanceTimeoutMs: 60_000,
  maxWaitTimeMs: 500,
  maxBytesPerPartition: 1_048_576,
  maxBytes: 8_388_608,
  /** Pause before an onBatch that threw is retried, or a failed join; doubles up to 30×. */
  retryDelayMs: 500,
} as const

export interface ReplayingGroupMemberOptions {
  /** A client made by createKafka: its brokers, client id and security are used. */
  kafka: Kafka
  groupId: string
  topics: string[]
  /**
   * KIP-345 static membership (`group.instance.id`): a member that restarts with the
   * same id within the session timeout gets its partitions back at once, without a
   * rebalance. Must be unique among the live members (a stable replica name: pod or
   * container name). Unset: a dynamic member.
   */
  groupInstanceId?: string
  /** The broker drops a member it has not heard from for this long [30 000]. */
  sessionTimeoutMs?: number
  /** Heartbeat period; also how fast a rebalance is noticed [3 000]. */
  heartbeatIntervalMs?: number
  /** How long a rebalance waits for the members to rejoin; at least the session timeout [60 000]. */
  rebalanceTimeoutMs?: number
  /** Long-poll wait of a fetch with nothing new [500]. */
  maxWaitTimeMs?: number
  maxBytesPerPartition?: number
  /**
   * The member's full assignment, after every rebalance (maybe empty, also when the
   * membership is lost). Every partition in it is then replayed from its first
   * offset, kept partitions too. No batch of an earlier assignment arrives after it.
   */
  onAssigned: (partitions: TopicPartition[]) => void
  /**
   * Records and progress of one partition, awaited (a partition's batches in offset
   * order). A throw is logged and the same batch handed over again after a backoff,
   * until it returns or the assignment ends.
   */
  onBatch: (batch: ReplayBatch) => void | Promise<void>
  /**
   * Where each assigned partition starts, keyed `${topic}:${partition}` (a
   * position below the partition's first offset starts there); partitions
   * absent from the answer start at their first offset. Asked on every
   * assignment, before its first batch, and again whenever its reading starts
   * over: for a consumer that keeps its offsets outside Kafka (in the database
   * it writes to). Default: every partition from its first offset.
   */
  startPositions?: (partitions: TopicPartition[]) => Promise<ReadonlyMap<string, bigint>>
  /**
   * Another live process joined with the same groupInstanceId and took the
   * membership over. Fatal, as in the Java client: this member stops (onAssigned([])
   * first) instead of taking it back, which would fence the other one in turn.
   */
  onFenced?: (error: unknown) => void
  logger?: KafkaLogger
}

export interface ReplayingGroupMember {
  /** Joins the group; resolves after the first assignment was handed to onAssigned. */
  start(): Promise<void>
  /**
   * Stops reading (waits for the batch being handed over), then leaves the group with
   * a LeaveGroup, static member or not, so the partitions move to the other members
   * at once. Idempotent. A crashed process sends nothing: a static member's
   * partitions then wait for it (or the session timeout).
   */
  stop(): Promise<void>
  assigned(): TopicPartition[]
}

/**
 * A consumer-group member that never commits: after every assignment it reads
 * each assigned partition read_committed from the beginning (state rebuilt from a
 * compacted topic) or from the positions `startPositions` gives (offsets kept
 * outside Kafka), on @platformatic/kafka with optional static membership. The
 * group protocol (join, sync, heartbeats, rejoin after a rebalance) is the client's;
 * each assignment is read by its own TopicReader (follow mode, only the assigned
 * partitions), on that reader's own connections so a long poll never holds up a
 * heartbeat or a JoinGroup.
 */
export function createReplayingGroupMember(options: ReplayingGroupMemberOptions): ReplayingGroupMember {
  const connection = requireConnection(options.kafka, 'createReplayingGroupMember')
  if (options.topics.length === 0) throw new KafkaConfigError('createReplayingGroupMember needs at least one topic')
  const d = REPLAYING_MEMBER_DEFAULTS
  const sessionTimeout = options.sessionTimeoutMs ?? d.sessionTimeoutMs
  const heartbeatInterval = options.heartbeatIntervalMs ?? d.heartbeatIntervalMs
  const rebalanceTimeout = Math.max(options.rebalanceTimeoutMs ?? d.rebalanceTimeoutMs, sessionTimeout)
  if (heartbeatInterval >= sessionTimeout)
    throw new KafkaConfigError(`heartbeatIntervalMs (${heartbeatInterval}) must be below sessionTimeoutMs (${sessionTimeout})`)
  if (options.groupInstanceId !== undefined && !/^[A-Za-z0-9._-]{1,249}$/.test(options.groupInstanceId))
    throw new KafkaConfigError(`groupInstanceId must be 1-249 letters, digits, dot, dash or underscore, got "${options.groupInstanceId}"`)
  const logger = options.logger ?? options.kafka.logger ?? SILENT_LOGGER
  const retryDelayMs = (attempt: number) => Math.min(30 * d.retryDelayMs, d.retryDelayMs * 2 ** Math.min(attempt - 1, 5))
  const who = { groupId: options.groupId, groupInstanceId: options.groupInstanceId ?? null }

  const consumer = new Consumer({
    ...baseOptions(connection, '-group'),
    groupId: options.groupId,
    ...(options.groupInstanceId === undefined ? {} : { groupInstanceId: options.groupInstanceId }),
    sessionTimeout,
    heartbeatInterval,
    rebalanceTimeout,
    isolationLevel: FetchIsolationLevels.READ_COMMITTED,
    autocommit: false,
  })

  let state: 'created' | 'running' | 'fenced' | 'stopped' = 'created'
  let assigned: TopicPartition[] = []
  let pending: TopicPartition[] | undefined
  let switching: Promise<void> | undefined
  let reading: Promise<void> = Promise.resolve()
  let controller: AbortController | undefined
  let rejoining: Promise<void> | undefined
  const stopping = new AbortController()
  let firstAssignment!: () => void
  const assignedOnce = new Promise<void>((resolve) => (firstAssignment = resolve))

  /** Hands the newest assignment over once the previous one's reading has stopped. */
  function assign(partitions: TopicPartition[]): void {
    pending = partitions
    switching ??= (async () => {
      while (pending !== undefined) {
        const next = pending
        pending = undefined
        controller?.abort()
        await reading
        if (state === 'stopped') return
        assigned = next
        try {
          options.onAssigned([...next])
        } catch (err) {
          logger.error({ err }, 'onAssigned threw; ignored')
        }
        firstAssignment()
        const c = new AbortController()
        controller = c
        reading = replay(next, c.signal).catch((err: unknown) => logger.error({ err }, 'replaying the assigned partitions failed'))
      }
    })().finally(() => (switching = undefined))
  }

  /** Reads `partitions` from their first offsets until `signal` aborts; returns once nothing more is handed over. */
  async function replay(partitions: TopicPartition[], signal: AbortSignal): Promise<void> {
    if (partitions.length === 0) return
    const ended = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
    for (let attempt = 1; !signal.aborted; attempt++) {
      let positions: ReadonlyMap<string, bigint> | undefined
      try {
        positions = await options.startPositions?.([...partitions])
      } catch (err) {
        logger.warn({ err, ...who, attempt }, 'reading the start positions failed; asking again')
        await abortableDelay(retryDelayMs(attempt), signal)
        continue
      }
      if (signal.aborted) return
      const reader = new TopicReader({
        kafka: options.kafka,
        topics: [...new Set(partitions.map((tp) => tp.topic))],
        partitions,
        ...(positions === undefined ? {} : { positions }),
        follow: true,
        maxWaitMs: options.maxWaitTimeMs ?? d.maxWaitTimeMs,
        maxBytes: d.maxBytes,
        maxBytesPerPartition: options.maxBytesPerPartition ?? d.maxBytesPerPartition,
        onRecords: (batch) => deliver({ ...batch, signal }),
        logger,
      })
      let failure: { err: unknown } | undefined
      try {
        // Fetch failures are retried inside the reader; start() fails when its first offset lookups do.
        await reader.start()
        // done() settles only after stop() (deliver never throws), or on a bug in the reader.
        await Promise.race([ended, reader.done()])
      } catch (err) {
        failure = { err }
      }
      // Waits for the batch in hand: nothing of this assignment arrives after it.
      await reader.stop()
      if (signal.aborted) return
      logger.warn({ err: failure?.err, ...who, attempt }, 'reading the assigned partitions failed; starting again')
      await abortableDelay(retryDelayMs(attempt), signal)
    }
  }

  async function deliver(batch: ReplayBatch): Promise<void> {
    for (let attempt = 1; !batch.signal.aborted; attempt++) {
      try {
        await options.onBatch(batch)
        return
      } catch (err) {
        // The caller's bug or a passing failure: the same records again after a pause (the
        // reader waits; its position stays before the batch), until the assignment ends.
        const delayMs = retryDelayMs(attempt)
        logger.error({ err, topic: batch.topic, partition: batch.partition, attempt, delayMs }, 'onBatch threw; the batch will be redelivered')
        await abortableDelay(delayMs, batch.signal)
      }
    }
  }

  function onJoin(payload: { generationId?: number; memberId?: string; assignments?: GroupAssignment[] }): void {
    if (state !== 'running') return
    const partitions = (payload.assignments ?? [])
      .filter((a) => options.topics.includes(a.topic))
      .flatMap((a) => [...a.partitions].sort((x, y) => x - y).map((partition) => ({ topic: a.topic, partition })))
    logger.info({ ...who, memberId: payload.memberId, generationId: payload.generationId, partitions }, 'joined the group')
    assign(partitions)
  }

  /** The client's own rejoin (after a heartbeat error) failed: the membership is gone; join again until it works. */
  function onLostMembership(error: unknown): void {
    if (state !== 'running') return
    logger.warn({ err: error, ...who }, 'group membership lost (rejoin failed); releasing the partitions and joining again')
    assign([])
    rejoining ??= (async () => {
      for (let attempt = 1; state === 'running'; attempt++) {
        try {
          await consumer.joinGroup({})
          return
        } catch (err) {
          if (state !== 'running') return
          const delayMs = Math.min(30_000, d.retryDelayMs * 2 ** Math.min(attempt, 6))
          logger.warn({ err, ...who, attempt, delayMs }, 'joining the group failed; retrying')
          await abortableDelay(delayMs, stopping.signal)
        }
      }
    })().finally(() => (rejoining = undefined))
  }

  // FENCED_INSTANCE_ID: the client drops its member id and rejoins with the same instance
  // id, which would fence the other process, and so on forever. Seen on the diagnostic
  // channels, before the client's callback runs.
  // The error events of the client's tracing channels (TracingChannel names them tracing:<name>:error).
  const channels = ['plt:kafka:consumer:heartbeat', 'plt:kafka:consumer:group'].map((name) => `tracing:${name}:error`)
  const onChannelError = (context: unknown) => {
    const { client, error } = context as { client?: unknown; error?: unknown }
    if (client !== consumer || state !== 'running' || !hasProtocolError(error, 'FENCED_INSTANCE_ID')) return
    state = 'fenced'
    logger.error({ err: error, ...who }, 'another process joined with this group instance id: this member stops')
    assign([])
    void (async () => {
      await switching
      // Leaving removes whichever member now holds the id; the other process rejoins at its next heartbeat.
      await closeClients()
      options.onFenced?.(error)
    })()
  }

  async function closeClients(): Promise<void> {
    for (const ch of channels) unsubscribe(ch, onChannelError)
    await consumer.close(true).catch((err: unknown) => logger.warn({ err, ...who }, 'leaving the group failed'))
  }

  return {
    async start() {
      if (state !== 'created') throw new KafkaConfigError(`start() called on a member that is ${state}`)
      state = 'running'
      for (const ch of channels) subscribe(ch, onChannelError)
      consumer.on('consumer:group:join', onJoin)
      consumer.on('error', onLostMembership)
      try {
        consumer.topics.trackAll(...options.topics)
        // Fails on a missing topic instead of joining with a subscription that can never be assigned.
        await consumer.metadata({ topics: options.topics })
        await consumer.joinGroup({})
      } catch (err) {
        state = 'stopped'
        await closeClients()
        throw err
      }
      await assignedOnce
    },

    async stop() {
      if (state === 'stopped') return
      const wasRunning = state === 'running'
      state = 'stopped'
      stopping.abort()
      controller?.abort()
      await switching
      await reading
      await rejoining
      if (wasRunning) await closeClients()
      assigned = []
    },

    assigned: () => [...assigned],
  }
}
