import type { KafkaLogger } from './logger.ts'

/** Record headers by name (a repeated header is an array; the KafkaJS shape the project kept). */
export interface RecordHeaders {
  [name: string]: Buffer | string | (Buffer | string)[] | undefined
}

/** One consumed record as the transform sees it (bytes untouched). */
export interface PipelineRecord {
  readonly topic: string
  readonly partition: number
  readonly offset: string
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly headers: RecordHeaders
  /** Record timestamp, epoch ms as a string (as KafkaJS had it). */
  readonly timestamp: string
}

/** A record the transform wants written, in the same transaction as the input's offset. */
export interface OutputRecord {
  topic: string
  key: string | Buffer | null
  /** Already serialized (e.g. AvroSerde codec `encode`); null is a tombstone. */
  value: Buffer | null
  headers?: RecordHeaders
  /** Explicit partition; default: the Java-compatible murmur2 partitioner on the key. */
  partition?: number
}

export interface TransformContext {
  /** 1 on the first try of this record; grows when the batch is redone after a systemic failure. */
  readonly attempt: number
  /** Aborted when the pipeline stops: stop waiting, the result would be discarded. */
  readonly signal: AbortSignal
}

/**
 * Turns one input record into zero or more output records.
 * - return outputs (or nothing) → committed with the input's offset;
 * - throw a PipelineError with retriable=false → the record goes to the DLQ (same transaction);
 * - throw anything else (retriable PipelineError, network error, bug) → systemic failure:
 *   nothing of this record or later ones is committed, the partition is paused, backs off and
 *   is redone. Transforms must therefore be safe to run more than once for the same record.
 */
export type Transform = (
  record: PipelineRecord,
  context: TransformContext,
) => TransformResult | Promise<TransformResult>

/**
 * What a transform gives. It may give it at once, without a promise (an
 * identity, a lookup in memory): the loop then makes no promise per record,
 * and what such a transform throws counts as a rejection would.
 */
export type TransformResult = OutputRecord[] | OutputRecord | undefined | void

export interface TopicPartition {
  topic: string
  partition: number
}

export interface CommittedEvent extends TopicPartition {
  /** Input records whose offsets were committed. */
  records: number
  /** Output records written (DLQ records not included). */
  outputs: number
  /** Records sent to the DLQ in this transaction. */
  deadLettered: number
  firstOffset: string
  lastOffset: string
  durationMs: number
}

export interface DeadLetterEvent extends TopicPartition {
  offset: string
  code: string
  /** The error's message, card numbers and IBANs masked (as in the DLQ record's header). */
  message: string
  /** Card numbers masked in the DLQ record (key, value, headers); 0 when none. */
  maskedPans: number
}

export interface PausedEvent extends TopicPartition {
  /** Offset the partition will be re-read from. */
  offset: string
  error: unknown
  code: string
  /** Consecutive systemic failures of this partition. */
  attempt: number
  delayMs: number
}

/**
 * A fetch offset outside the partition's log (fetch-control.ts, out-of-range.ts): records
 * removed before they were read, or a truncated log. Offsets as decimal strings.
 */
export interface OffsetOutOfRangeEvent extends TopicPartition {
  requestedOffset: string
  logStartOffset: string
  highWatermark: string
  /** True when the requested offset is below the log start: records were removed unread. */
  removed: boolean
  /** Where the loop reads on from, unless held. */
  resetTo: string
  /** Offsets skipped unread by reading on from resetTo; 0 when held or when it reads again from an earlier offset. */
  skippedOffsets: number
  /** The partition is held (`offsetOutOfRange: 'hold'`): nothing more is read from it until a rebalance. */
  held: boolean
}

export interface AbortedEvent extends TopicPartition {
  reason: string
  error?: unknown
}

export interface PipelineHooks {
  onCommitted?(event: CommittedEvent): void
  onDeadLettered?(event: DeadLetterEvent): void
  onPaused?(event: PausedEvent): void
  onResumed?(event: TopicPartition & { attempt: number }): void
  onAborted?(event: AbortedEvent): void
  /** A fetch offset was out of range: records were skipped unread, will be read again, or the partition is held. */
  onOffsetOutOfRange?(event: OffsetOutOfRangeEvent): void
  onAssigned?(event: { partitions: TopicPartition[] }): void
  /**
   * The consumer failed. `restart: true`: it is being re-created in place (a fetch or
   * group rejoin the client gave up on, e.g. during a broker failover) and
   * `onRecovered` follows once a new one consumes; `restart: false`: the loop itself
   * crashed and consumes nothing any more (the process should exit).
   */
  onCrash?(event: { error: unknown; restart: boolean }): void
  /** A failed consumer was replaced by a new one, which now joins the group. */
  onRecovered?(event: { reason: string; attempts: number; downMs: number }): void
}

export interface PipelineStatus {
  state: 'created' | 'starting' | 'running' | 'stopping' | 'stopped'
  assigned: TopicPartition[]
  paused: (TopicPartition & { since: number; attempt: number; code: string })[]
  /** Set while the consumer is being re-created after a failure, or for good when the loop itself crashed. */
  crashed?: { message: string; at: number }
}

export interface PipelineLoggerOption {
  logger?: KafkaLogger
}

/** A running exactly-once loop (createTransactionalPipeline). */
export interface TransactionalPipeline {
  /** Connects, subscribes and starts consuming; resolves once the consumer runs (not yet assigned). */
  start(): Promise<void>
  /** Stops fetching, lets the in-flight batch commit or abort, disconnects every client. Idempotent. */
  stop(): Promise<void>
  /** Resolves at the next partition assignment (or the current one if already assigned). */
  whenAssigned(): Promise<TopicPartition[]>
  status(): PipelineStatus
}
