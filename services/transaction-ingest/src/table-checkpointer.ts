import { mkdir, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { PipelineError } from '@tep/errors'
import { abortableDelay, describeTopics, type ClusterTopics, type Kafka, type KafkaLogger } from '@tep/kafka'
import { checkpointMismatch } from './checkpoint-check.ts'
import { CheckpointRefused } from './errors.ts'
import type { MerchantTables } from './snapshot-table.ts'
import {
  CHECKPOINT_FILE,
  readCheckpointBody,
  readCheckpointHeader,
  writeCheckpoint,
  type CheckpointHeader,
} from './table-checkpoint.ts'

/** The table checkpoint settings (INGEST_STATE_DIR and friends). */
export interface TableCheckpointConfig {
  /** Directory of the checkpoint file (created if missing). */
  dir: string
  /** How often a running instance writes it when the table moved; default 5 min. */
  intervalMs?: number
  /** Older checkpoints are not used (see CheckpointExpectations.maxAgeMs); default 12 h. */
  maxAgeMs?: number
  now?: () => number
}

export interface TableCheckpointerOptions {
  config: TableCheckpointConfig
  kafka: Kafka
  tables: MerchantTables
  shopsTopic: string
  merchantsTopic: string
  logger?: KafkaLogger
  /** Told while the cluster does not answer at start (for readiness). */
  onWaiting?: (reason: string) => void
  /** Who the cluster and its topics are; describeTopics (tests give their own). */
  describe?: (kafka: Kafka, topics: string[]) => Promise<ClusterTopics>
}

/** Backoff while the cluster does not answer at start: 200 ms doubling to 5 s. */
function waitDelayMs(attempt: number): number {
  return Math.min(5_000, 200 * 2 ** Math.min(attempt - 1, 5))
}

export const DEFAULT_CHECKPOINT_INTERVAL_MS = 5 * 60_000
export const DEFAULT_CHECKPOINT_MAX_AGE_MS = 12 * 3_600_000

/**
 * Restores the tables from the checkpoint when it still describes the topics,
 * and writes new checkpoints. It only reads and writes files and asks the
 * cluster who it is; when the tables may be read (nothing applying records)
 * is the TableReader's business (`quiet` of `save`).
 */
export class TableCheckpointer {
  readonly #options: TableCheckpointerOptions
  readonly #now: () => number
  /** The topics' ids when this instance started reading them: a checkpoint names these. */
  #identity: ClusterTopics | undefined
  /** Positions of the last checkpoint written or restored (nothing to write while unchanged). */
  #lastPositions: string | undefined
  #saving: Promise<boolean> | undefined

  readonly #describe: (kafka: Kafka, topics: string[]) => Promise<ClusterTopics>

  constructor(options: TableCheckpointerOptions) {
    this.#options = options
    this.#now = options.config.now ?? Date.now
    this.#describe = options.describe ?? describeTopics
  }

  get file(): string {
    return path.join(this.#options.config.dir, CHECKPOINT_FILE)
  }

  get intervalMs(): number {
    return this.#options.config.intervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS
  }

  /**
   * Fills the (empty) tables from the checkpoint and returns the positions to
   * read on from; undefined (with the reason logged) when there is none or it
   * cannot be used, and the tables are then still empty. A cluster that does
   * not answer is waited for, as long as it takes: without it the checkpoint
   * cannot be checked, and a load from the topics could not start either, so
   * giving the checkpoint up would only turn a short outage into a cold load
   * (a minute and more at millions of shops). `signal` (the reader stopping)
   * ends the wait.
   */
  async restore(signal?: AbortSignal): Promise<Map<string, bigint> | undefined> {
    const { config, tables, shopsTopic, merchantsTopic, logger } = this.#options
    const started = this.#now()
    try {
      await this.#removeLeftovers()
      // The cluster is asked who it is while the file is read: the two took turns before, and
      // the describe (a connection, metadata, two offset lists) is a measurable part of a warm
      // restart. A body read for a checkpoint then refused is only garbage (a cold load follows).
      const identityAsked = this.#describeUntilAnswered(signal)
      identityAsked.catch(() => {})
      // A header that cannot be read still waits for the describe: left running, its late
      // `onWaiting` would mark a ready instance unready, and the cold load needs the cluster anyway.
      const found = await readCheckpointHeader(config.dir).catch(async (err: unknown) => {
        const identity = await identityAsked.catch(() => undefined)
        if (identity !== undefined) this.#identity = identity
        throw err
      })
      const bodyRead = found === undefined ? undefined : readCheckpointBody(config.dir, found.header)
      bodyRead?.catch(() => {})
      const identity = await identityAsked
      if (identity === undefined) return undefined
      this.#identity = identity
      if (found === undefined || bodyRead === undefined) {
        logger?.info({ file: this.file }, 'no table checkpoint yet; loading the table from the topics')
        return undefined
      }
      const reason = checkpointMismatch(found.header, {
        shopsTopic,
        merchantsTopic,
        layout: tables.layout,
        cluster: this.#identity,
        now: this.#now(),
        maxAgeMs: config.maxAgeMs ?? DEFAULT_CHECKPOINT_MAX_AGE_MS,
      })
      if (reason !== undefined) throw new CheckpointRefused(reason)
      const state = await bodyRead
      try {
        // The buffers were allocated for these tables by the read: adopted, not copied.
        tables.restoreState(state, true)
      } catch (err) {
        tables.clear()
        throw new CheckpointRefused(`its tables do not restore: ${(err as Error).message}`)
      }
      const positions = new Map(Object.entries(found.header.positions).map(([k, v]) => [k, BigInt(v)]))
      this.#lastPositions = JSON.stringify(found.header.positions)
      logger?.info(
        {
          file: this.file,
          shops: tables.shops.size,
          merchants: tables.merchants.size,
          shards: state.length,
          ageSeconds: Math.round((this.#now() - found.header.writtenAt) / 1000),
          bytes: found.size,
          restoreMs: this.#now() - started,
        },
        'table restored from its checkpoint; reading the topics on from its positions',
      )
      return positions
    } catch (err) {
      if (err instanceof CheckpointRefused)
        logger?.warn({ file: this.file, reason: err.reason }, `table checkpoint not used: ${err.reason}; loading the table from the topics`)
      else logger?.warn({ file: this.file, err }, 'table checkpoint could not be read; loading the table from the topics')
      return undefined
    }
  }

  async #describeUntilAnswered(signal: AbortSignal | undefined): Promise<ClusterTopics | undefined> {
    const { kafka, shopsTopic, merchantsTopic, logger, onWaiting } = this.#options
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#describe(kafka, [shopsTopic, merchantsTopic])
      } catch (err) {
        // A setting that is wrong (not a client made by createKafka) does not get better by waiting.
        if (err instanceof PipelineError && !err.retriable) throw err
        if (signal?.aborted) return undefined
        const delayMs = waitDelayMs(attempt)
        logger?.warn(
          { err, attempt, delayMs },
          'the Kafka cluster does not answer; the table checkpoint waits for it (a load from the topics would too)',
        )
        onWaiting?.(`waiting for the Kafka cluster to check the table checkpoint (attempt ${attempt}): ${(err as Error).message}`)
        await abortableDelay(delayMs, signal)
        if (signal?.aborted) return undefined
      }
    }
  }

  /** Temporary files of writes a kill interrupted (each as large as a checkpoint). */
  async #removeLeftovers(): Promise<void> {
    const { dir } = this.#options.config
    const names = await readdir(dir).catch(() => [] as string[])
    for (const name of names)
      if (name.startsWith(`${CHECKPOINT_FILE}.`) && name.endsWith('.tmp'))
        await rm(path.join(dir, name), { force: true }).catch(() => {})
  }

  /**
   * Writes a checkpoint of the tables at `positions()` unless they did not
   * move since the last one. `quiet` runs its callback while no record is
   * applied to the tables (their buffers are written as they are). Resolves
   * whether a file was written; failures are logged, never thrown (the
   * instance works without a checkpoint). A call while a save runs waits for
   * it and then saves again: the save at a clean stop must not be answered by
   * an interval save that took its positions earlier.
   */
  save(positions: () => Record<string, string>, quiet: <T>(fn: () => Promise<T>) => Promise<T>): Promise<boolean> {
    const previous = this.#saving
    const run = (async () => {
      await previous
      return this.#save(positions, quiet)
    })()
    this.#saving = run
    return run
  }

  async #save(positions: () => Record<string, string>, quiet: <T>(fn: () => Promise<T>) => Promise<T>): Promise<boolean> {
    const { config, kafka, tables, shopsTopic, merchantsTopic, logger } = this.#options
    const started = this.#now()
    try {
      const identity = this.#identity ?? (this.#identity = await this.#describe(kafka, [shopsTopic, merchantsTopic]))
      const shops = identity.topics.get(shopsTopic)
      const merchants = identity.topics.get(merchantsTopic)
      if (shops === undefined || merchants === undefined) return false
      // A topic recreated since the start: the positions read would be put under the new id.
      const current = await this.#describe(kafka, [shopsTopic, merchantsTopic])
      if (current.topics.get(shopsTopic)?.id !== shops.id || current.topics.get(merchantsTopic)?.id !== merchants.id) {
        logger?.warn({ file: this.file }, 'a table topic was recreated while this instance read it; no checkpoint written')
        return false
      }
      await mkdir(config.dir, { recursive: true })
      const written = await quiet(async () => {
        const at = positions()
        const key = JSON.stringify(at)
        if (key === this.#lastPositions) return undefined
        const header: Omit<CheckpointHeader, 'format' | 'byteOrder' | 'shards'> = {
          writtenAt: this.#now(),
          clusterId: identity.clusterId,
          topics: { shops: { name: shopsTopic, id: shops.id }, merchants: { name: merchantsTopic, id: merchants.id } },
          layout: tables.layout,
          positions: at,
        }
        const result = await writeCheckpoint(config.dir, { header, state: tables.topicState() })
        this.#lastPositions = key
        return result
      })
      if (written === undefined) return false
      logger?.info(
        { file: written.file, bytes: written.bytes, shops: tables.shops.size, merchants: tables.merchants.size, writeMs: this.#now() - started },
        'table checkpoint written',
      )
      return true
    } catch (err) {
      logger?.warn({ file: this.file, err }, 'table checkpoint could not be written; the next restart loads the table from an older one or the topics')
      return false
    }
  }
}
