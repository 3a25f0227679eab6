import type { Merchant, Shop } from '@tep/schemas'
import { avroSchema } from '@tep/schemas'
import { CompactTable, type CompactTableState } from './compact-table.ts'
import { createCompactCodec, StringPools, Writer, type CompactCodec } from './compact-codec.ts'

/** Spec limit 4: without invalidations, shop and merchant results may be cached for at most one week. */
export const MAX_AGE_WITHOUT_INVALIDATIONS_MS = 7 * 24 * 3_600_000

export type Snapshot = { uid: string; fetchedAt: number }

export interface SnapshotTableOptions {
  /** When false, entries fetched more than `maxAgeMs` ago are treated as misses. */
  invalidationsEnabled: boolean
  maxAgeMs?: number
  now?: () => number
}

/**
 * The local copy of one compacted topic (shops or merchants), keyed by uid and
 * stored compactly (see CompactTable and the compact codec).
 *
 * Two writers with different rules:
 * - `applyFromTopic`: records of the compacted topic, written by the refresher
 *   (the single writer). Applied unconditionally in offset order, tombstones
 *   delete: the topic is the truth.
 * - `putFetched`: what this instance fetched from the API on a miss. Kept only if
 *   it is not older than what the table holds, so that a concurrent refresher
 *   write with newer data is never overwritten by our older read.
 */
export class SnapshotTable<T extends Snapshot> {
  readonly #table = new CompactTable()
  readonly #codec: CompactCodec<T>
  readonly #writer: Writer
  readonly #invalidationsEnabled: boolean
  readonly #maxAgeMs: number
  readonly #now: () => number
  /** The codec writes fetchedAt first (leadingLong), so it is read without decoding. */
  readonly #readFetchedAt = (chunk: Buffer, offset: number): number => chunk.readDoubleLE(offset)

  constructor(codec: CompactCodec<T>, writer: Writer, options: SnapshotTableOptions) {
    this.#codec = codec
    this.#writer = writer
    this.#invalidationsEnabled = options.invalidationsEnabled
    this.#maxAgeMs = options.maxAgeMs ?? MAX_AGE_WITHOUT_INVALIDATIONS_MS
    this.#now = options.now ?? Date.now
  }

  get size(): number {
    return this.#table.size
  }

  get memoryBytes(): number {
    return this.#table.memoryBytes
  }

  /** A usable snapshot, or undefined when absent or (invalidations off) older than the limit. */
  get(uid: string): T | undefined {
    const value = this.#table.get(uid, (chunk, offset) => this.#codec.decode(chunk, offset, uid))
    if (value === undefined) return undefined
    if (!this.#invalidationsEnabled && this.#now() - value.fetchedAt > this.#maxAgeMs) return undefined
    return value
  }

  /** fetchedAt of the stored entry whatever its age, without decoding it. */
  fetchedAtOf(uid: string): number | undefined {
    return this.#table.get(uid, this.#readFetchedAt)
  }

  applyFromTopic(uid: string, value: T | null): void {
    if (value === null) this.#table.delete(uid)
    else this.#put(uid, value)
  }

  /** Stores a snapshot read from the API unless the table already has a newer one. Returns whether it was stored. */
  putFetched(value: T): boolean {
    const current = this.fetchedAtOf(value.uid)
    if (current !== undefined && current > value.fetchedAt) return false
    this.#put(value.uid, value)
    return true
  }

  delete(uid: string): void {
    this.#table.delete(uid)
  }

  /** Hands the stored entries over (see CompactTable.exportState); the table is empty afterwards. */
  exportState(): CompactTableState {
    return this.#table.exportState()
  }

  restoreState(state: CompactTableState): void {
    this.#table.restoreState(state)
  }

  #put(uid: string, value: T): void {
    if (value.uid !== uid) throw new TypeError(`snapshot uid ${value.uid} does not match its key ${uid}`)
    this.#writer.reset()
    this.#codec.encode(this.#writer, value)
    this.#table.set(uid, this.#writer.buf, this.#writer.pos)
  }
}

/** The shop and merchant tables of one ingest instance, sharing one string pool. */
export interface MerchantTables {
  shops: SnapshotTable<Shop>
  merchants: SnapshotTable<Merchant>
  /** Distinct pooled strings (categorical values shared by all entries). */
  pooledStrings(): number
  /**
   * Hands both tables and their string pools over as plain data plus
   * buffers (a table built by a loader moves to the serving thread or process
   * without being rebuilt); both tables are empty afterwards.
   */
  exportState(): MerchantTablesState
  /** Takes over a state from `exportState`; only into tables that are still empty. */
  restoreState(state: MerchantTablesState): void
}

export interface MerchantTablesState {
  shops: CompactTableState
  merchants: CompactTableState
  pools: Record<string, string[]>
}

/** The buffers of a state, for the transfer list of a postMessage. */
export function merchantTablesTransferables(state: MerchantTablesState): ArrayBuffer[] {
  return [...CompactTable.transferables(state.shops), ...CompactTable.transferables(state.merchants)]
}

// Strings that are unique per entity gain nothing from pooling and would only grow the pool.
const SHOP_INLINE = ['location.address.street', 'googlePlaceId']
const MERCHANT_INLINE = ['name', 'logo', 'url']

export function createMerchantTables(options: SnapshotTableOptions): MerchantTables {
  const pools = new StringPools()
  const writer = new Writer()
  const shopCodec = createCompactCodec<Shop>(avroSchema('Shop').type, pools, {
    keyField: 'uid',
    leadingLong: 'fetchedAt',
    inlineStrings: SHOP_INLINE,
    // Shops repeat their merchant's uid: worth pooling for far more merchants than the default budget.
    poolBudgets: { merchantUid: 4_000_000 },
  })
  const merchantCodec = createCompactCodec<Merchant>(avroSchema('Merchant').type, pools, {
    keyField: 'uid',
    leadingLong: 'fetchedAt',
    inlineStrings: MERCHANT_INLINE,
  })
  const shops = new SnapshotTable(shopCodec, writer, options)
  const merchants = new SnapshotTable(merchantCodec, writer, options)
  return {
    shops,
    merchants,
    pooledStrings: () => pools.size,
    exportState: () => ({
      pools: pools.exportState(),
      shops: shops.exportState(),
      merchants: merchants.exportState(),
    }),
    restoreState: (state) => {
      if (shops.size > 0 || merchants.size > 0 || pools.size > 0)
        throw new Error('table state can only be restored into empty tables')
      pools.restoreState(state.pools)
      shops.restoreState(state.shops)
      merchants.restoreState(state.merchants)
    },
  }
}
