import { PipelineError } from '@tep/errors'
import { abortableDelay, describeTopics, type ClusterTopics, type Kafka, type KafkaLogger } from '@tep/kafka'
import { checkpointMismatch } from '../checkpoint-check.ts'
import { DEFAULT_CHECKPOINT_MAX_AGE_MS } from '../table-checkpointer.ts'
import type { LmdbMerchantTables, LmdbStoreIdentity } from './lmdb-tables.ts'

export interface LmdbRestoreOptions {
  tables: LmdbMerchantTables
  kafka: Kafka
  shopsTopic: string
  merchantsTopic: string
  /** Older stores are not used (INGEST_STATE_MAX_AGE, as for the checkpoint); default 12 h. */
  maxAgeMs?: number
  now?: () => number
  logger?: KafkaLogger
  onWaiting?: (reason: string) => void
  signal?: AbortSignal
  describe?: (kafka: Kafka, topics: string[]) => Promise<ClusterTopics>
}

/**
 * The warm start of the LMDB store: the positions to read on from when the
 * store still describes the topics (the checks of the compact table's
 * checkpoint, checkpointMismatch: same cluster, topics, ids, layout, recent
 * enough, every position within its log); otherwise the store is emptied
 * and stamped with the topics it will now hold, and undefined says: load
 * from the beginning. A cluster that does not answer is waited for, as the
 * checkpoint does (a load could not start without it either).
 */
export async function restoreLmdbPositions(options: LmdbRestoreOptions): Promise<Map<string, bigint> | undefined> {
  const { tables, shopsTopic, merchantsTopic, logger } = options
  const now = options.now ?? Date.now
  const started = now()
  const cluster = await describeUntilAnswered(options)
  if (cluster === undefined) return undefined
  const shops = cluster.topics.get(shopsTopic)
  const merchants = cluster.topics.get(merchantsTopic)
  const identity: LmdbStoreIdentity | undefined =
    shops === undefined || merchants === undefined
      ? undefined
      : { clusterId: cluster.clusterId, topics: { shops: { name: shopsTopic, id: shops.id }, merchants: { name: merchantsTopic, id: merchants.id } }, layout: tables.layout }
  const stored = tables.storedState()
  let reason: string | undefined
  if (stored.identity === undefined || stored.writtenAt === undefined || Object.keys(stored.positions).length === 0) reason = 'the store is empty'
  else
    reason = checkpointMismatch(
      { ...stored.identity, writtenAt: stored.writtenAt, positions: stored.positions },
      { shopsTopic, merchantsTopic, layout: tables.layout, cluster, now: now(), maxAgeMs: options.maxAgeMs ?? DEFAULT_CHECKPOINT_MAX_AGE_MS },
    )
  if (reason === undefined) {
    logger?.info(
      {
        dir: tables.dir,
        shops: tables.shops.size,
        merchants: tables.merchants.size,
        ageSeconds: Math.round((now() - stored.writtenAt!) / 1000),
        bytes: tables.fileBytes(),
        restoreMs: now() - started,
      },
      'table restored from its checkpoint (the LMDB store); reading the topics on from its positions',
    )
    return new Map(Object.entries(stored.positions).map(([k, v]) => [k, BigInt(v)]))
  }
  if (reason !== 'the store is empty') logger?.warn({ dir: tables.dir, reason }, `table store not used: ${reason}; loading the table from the topics`)
  else logger?.info({ dir: tables.dir }, 'no table store yet; loading the table from the topics')
  // Topics missing now: the reader's own start reports that; the store stays empty without an identity.
  if (identity !== undefined) await tables.reset(identity)
  return undefined
}

async function describeUntilAnswered(options: LmdbRestoreOptions): Promise<ClusterTopics | undefined> {
  const describe = options.describe ?? describeTopics
  for (let attempt = 1; ; attempt++) {
    try {
      return await describe(options.kafka, [options.shopsTopic, options.merchantsTopic])
    } catch (err) {
      if (err instanceof PipelineError && !err.retriable) throw err
      if (options.signal?.aborted) return undefined
      const delayMs = Math.min(5_000, 200 * 2 ** Math.min(attempt - 1, 5))
      options.logger?.warn({ err, attempt, delayMs }, 'the Kafka cluster does not answer; the table store waits for it (a load from the topics would too)')
      options.onWaiting?.(`waiting for the Kafka cluster to check the table store (attempt ${attempt}): ${(err as Error).message}`)
      await abortableDelay(delayMs, options.signal)
      if (options.signal?.aborted) return undefined
    }
  }
}
