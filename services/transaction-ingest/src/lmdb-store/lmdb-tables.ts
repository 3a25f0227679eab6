import { createHash } from 'node:crypto'
import { mkdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { open, type Database, type RootDatabase } from 'lmdb'
import { avroSchema, type Merchant, type Shop } from '@tep/schemas'
import type { CheckpointTopic } from '../table-checkpoint.ts'
import type { DetailTables } from '../snapshot-store.ts'
import type { SnapshotTableOptions } from '../snapshot-table.ts'
import { LmdbSnapshotTable } from './lmdb-snapshot-table.ts'

/** The store's directory under INGEST_STATE_DIR. */
export const LMDB_DIR = 'table.lmdb'
/** Bumped when the stored value layout (LmdbSnapshotTable) changes. */
const VALUE_FORMAT = 1

/** Who the stored positions belong to: checked at start (checkpointMismatch) before they are used. */
export interface LmdbStoreIdentity {
  clusterId: string
  topics: { shops: CheckpointTopic; merchants: CheckpointTopic }
  layout: string
}

/** What the store holds besides the tables. */
export interface LmdbStoredState {
  identity: LmdbStoreIdentity | undefined
  /** When the positions were last committed (or confirmed current at a clean stop). */
  writtenAt: number | undefined
  /** Next offset per `${topic}:${partition}`: the tables hold every record before it. */
  positions: Record<string, string>
}

/**
 * The shop and merchant tables in one LMDB environment (INGEST_TABLE_STORE=lmdb),
 * with the topic positions they reflect and the identity of those topics.
 *
 * The guarantee of the compact table's checkpoint holds the same way: a
 * position is only ever written in the same LMDB transaction as, or one after,
 * every record before it. `commit` queues the pending records, then the
 * positions, as lmdb-js asynchronous writes of one batch: they are executed
 * in order and committed as one transaction (a crash, even mid-write, leaves
 * either all of them or none; transactions commit in order), so a store can
 * be behind its topics but never claim a record it does not hold.
 */
export class LmdbMerchantTables implements DetailTables {
  readonly kind = 'lmdb' as const
  readonly shops: LmdbSnapshotTable<Shop>
  readonly merchants: LmdbSnapshotTable<Merchant>
  readonly layout = lmdbLayout()
  readonly dir: string
  readonly #root: RootDatabase
  readonly #shopsDb: Database<Buffer, string>
  readonly #merchantsDb: Database<Buffer, string>
  readonly #positions: Database<string, string>
  readonly #meta: Database<unknown, string>
  readonly #now: () => number
  #closed = false
  /** The first commit that failed: after it no position is written again (it would claim the lost records). */
  #failed: unknown

  constructor(dir: string, options: SnapshotTableOptions) {
    this.dir = path.join(dir, LMDB_DIR)
    mkdirSync(this.dir, { recursive: true })
    this.#now = options.now ?? Date.now
    // Default durability (synchronous, overlapping flush): an OS crash cannot corrupt the store either.
    this.#root = open({ path: path.join(this.dir, 'data.mdb'), maxDbs: 4 })
    this.#shopsDb = this.#root.openDB({ name: 'shops', encoding: 'binary' })
    this.#merchantsDb = this.#root.openDB({ name: 'merchants', encoding: 'binary' })
    // The shop's merchantUid is kept beside its bytes: getAvro gives it without decoding (the merchant is looked up by it).
    this.shops = new LmdbSnapshotTable<Shop>(this.#shopsDb, avroSchema('Shop').type, { ...options, capture: 'merchantUid' })
    this.merchants = new LmdbSnapshotTable<Merchant>(this.#merchantsDb, avroSchema('Merchant').type, options)
    this.#positions = this.#root.openDB({ name: 'positions', encoding: 'string' })
    this.#meta = this.#root.openDB({ name: 'meta', encoding: 'json' })
  }

  pooledStrings(): number {
    return 0
  }

  storedState(): LmdbStoredState {
    const positions: Record<string, string> = {}
    for (const { key, value } of this.#positions.getRange()) positions[key] = value
    return {
      identity: this.#meta.get('identity') as LmdbStoreIdentity | undefined,
      writtenAt: this.#meta.get('writtenAt') as number | undefined,
      positions,
    }
  }

  /**
   * Writes the records applied since the last commit and `positions` in one
   * transaction; resolves once it is durable. Commits are written in the order called.
   */
  async commit(positions: Iterable<[string, bigint]>): Promise<void> {
    // The records of a failed batch are not in the store; a later batch's positions are past them.
    if (this.#failed !== undefined) throw new Error('an earlier write to the LMDB table store failed; no position is written after it', { cause: this.#failed })
    const shopWrites = this.shops.takePending()
    const merchantWrites = this.merchants.takePending()
    const shops = this.#shopsDb
    const merchants = this.#merchantsDb
    const stamp = this.#now()
    try {
      await this.#root.batch(() => {
        for (const [db, writes] of [[shops, shopWrites], [merchants, merchantWrites]] as const)
          for (const [uid, value] of writes) void (value === null ? db.remove(uid) : db.put(uid, value))
        // After the records: the positions never run ahead of what is stored.
        for (const [key, offset] of positions) void this.#positions.put(key, offset.toString())
        void this.#meta.put('writtenAt', stamp)
      })
    } catch (err) {
      this.#failed ??= err
      throw err
    } finally {
      this.shops.settle(shopWrites)
      this.merchants.settle(merchantWrites)
    }
  }

  /** Empties the store and records whose topics it will hold (before a load from the beginning). */
  async reset(identity: LmdbStoreIdentity): Promise<void> {
    this.shops.clear()
    this.merchants.clear()
    // The positions go first: a crash part way leaves no position claiming what is gone.
    await this.#positions.clearAsync()
    await this.#meta.clearAsync()
    await this.#shopsDb.clearAsync()
    await this.#merchantsDb.clearAsync()
    await this.#meta.put('identity', identity)
  }

  /** Bytes of the store's data file (its pages are mapped, so they count in RSS only while resident). */
  fileBytes(): number {
    try {
      return statSync(path.join(this.dir, 'data.mdb')).size
    } catch {
      return 0
    }
  }

  /** Copies the committed store into `dir` (as its LMDB_DIR), e.g. to inspect or seed another instance. */
  async backupTo(dir: string): Promise<void> {
    const target = path.join(dir, LMDB_DIR)
    mkdirSync(target, { recursive: true })
    await this.#root.backup(path.join(target, 'data.mdb'), false)
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#root.close()
  }
}

/** Opens (or creates) the LMDB store of the tables under `dir` (INGEST_STATE_DIR). */
export function openLmdbMerchantTables(dir: string, options: SnapshotTableOptions): LmdbMerchantTables {
  return new LmdbMerchantTables(dir, options)
}

function lmdbLayout(): string {
  const fingerprint = (name: 'Shop' | 'Merchant'): string =>
    (avroSchema(name).type as unknown as { fingerprint(algorithm: string): Buffer }).fingerprint('sha256').toString('hex')
  return createHash('sha256')
    .update(JSON.stringify({ store: 'lmdb', valueFormat: VALUE_FORMAT, shop: fingerprint('Shop'), merchant: fingerprint('Merchant') }))
    .digest('hex')
}
