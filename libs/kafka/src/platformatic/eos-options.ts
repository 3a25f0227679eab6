import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import { FetchIsolationLevels, type ConsumerOptions } from '@platformatic/kafka'
import { KafkaConfigError } from '../errors.ts'
import type { TransactionalPipelineOptions } from '../pipeline-options.ts'
import { baseOptions, FAILOVER_RETRIES, type KafkaConnection } from './connection.ts'

/** Documented defaults of the @platformatic/kafka loop (see libs/kafka/README.md). */
export const EOS_DEFAULTS = {
  concurrency: 16,
  partitionsConsumedConcurrently: 1,
  maxRecordsPerTransaction: 10_000,
  commitIntervalMs: 5,
  transactionTimeoutMs: 10_000,
  /**
   * Fetch answer bounds (the Java consumer's max.partition.fetch.bytes; a tighter
   * fetch.max.bytes). The client's own default is 50 MB for both, and it parses a whole
   * answer at once: when the partitions read first ran dry, the next answer carried the
   * others' whole backlog, about 250,000 records, parsed in one go far beyond the loop's
   * buffered bound (the pause comes after the answer): 300-400 ms of parsing and garbage
   * collection with no transaction running. Measured in docs/DECISIONS.md.
   */
  maxBytesPerPartition: 1_048_576,
  maxBytes: 8_388_608,
} as const

export interface EosSettings {
  /**
   * Records transformed at once over all assigned partitions:
   * concurrency × partitionsConsumedConcurrently. Any partition may use all
   * of it: a fetch answer usually
   * carries one partition's records, and a per-partition window left the
   * others' budget idle while that partition waited on its window.
   */
  maxInFlight: number
  maxPerTxn: number
  lingerMs: number
  instanceId: string
  transactionalId: string
  /** Records received and not yet committed, over all partitions, at which the stream pauses its fetches. */
  highWater: number
}

/** The loop's settings from the pipeline options and EOS_DEFAULTS. */
export function resolveEosSettings(options: TransactionalPipelineOptions): EosSettings {
  const concurrency = options.concurrency ?? EOS_DEFAULTS.concurrency
  const partitions = options.partitionsConsumedConcurrently ?? EOS_DEFAULTS.partitionsConsumedConcurrently
  const maxPerTxn = options.maxRecordsPerTransaction ?? EOS_DEFAULTS.maxRecordsPerTransaction
  const lingerMs = options.commitIntervalMs ?? EOS_DEFAULTS.commitIntervalMs
  if (!Number.isFinite(lingerMs) || lingerMs < 0)
    throw new KafkaConfigError(`commitIntervalMs must be >= 0, got ${lingerMs}`)
  // Without a stable name a restart cannot abort its predecessor's open transaction at once.
  const instanceId = options.instanceId ?? `${hostname()}-${randomBytes(4).toString('hex')}`
  return {
    maxInFlight: concurrency * partitions,
    maxPerTxn,
    lingerMs,
    instanceId,
    transactionalId: `${options.transactionalIdPrefix}-${instanceId}`,
    // What the windows and one transaction hold, plus a fetch's worth to start the next records
    // at once. More bought no throughput and cost garbage collection: buffered records outlive
    // V8's young generation, so scavenges copy them (it was 4 × maxPerTxn, 12,000 records;
    // measured in DECISIONS.md, "The ingest's CPU per event").
    highWater: concurrency * partitions + maxPerTxn + 1_000,
  }
}

/** The loop's consumer: read_committed, no autocommit (offsets go into the transactions). */
export function eosConsumerOptions(
  connection: KafkaConnection,
  groupId: string,
  c: TransactionalPipelineOptions['consumer'] = {},
): ConsumerOptions<Buffer, Buffer, Buffer, Buffer> {
  return {
    ...baseOptions(connection, '-consumer'),
    // A fetch from a dead leader waits for the new one instead of failing the stream (connection.ts).
    retries: FAILOVER_RETRIES,
    groupId,
    sessionTimeout: c.sessionTimeout ?? 30_000,
    heartbeatInterval: c.heartbeatInterval ?? 3_000,
    ...(c.rebalanceTimeout === undefined ? {} : { rebalanceTimeout: c.rebalanceTimeout }),
    isolationLevel: FetchIsolationLevels.READ_COMMITTED,
    autocommit: false,
    maxWaitTime: c.maxWaitTimeInMs ?? 200,
    maxBytesPerPartition: c.maxBytesPerPartition ?? EOS_DEFAULTS.maxBytesPerPartition,
    maxBytes: c.maxBytes ?? EOS_DEFAULTS.maxBytes,
  }
}
