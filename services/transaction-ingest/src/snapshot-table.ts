import { createHash } from 'node:crypto'
import type avro from 'avsc'
import type { Merchant, Shop } from '@tep/schemas'
import { avroSchema } from '@tep/schemas'
import { CompactTable, type CompactTableState } from './compact-table.ts'
import { createCompactCodec, StringPools, Writer, type CompactCodec } from './compact-codec.ts'

/** Spec limit 4: without invalidations, shop and merchant results may be cached for at most one week. */
export const MAX_AGE_WITHOUT_INVALIDATIONS_MS = 7 * 24 * 3_600_000

export type Snapshot = { uid: string; fetchedAt: number }

/**
 * getAvro's bytes are views of a slab it only ever appends to: a hit costs no
 * allocation and no copy of its own (the splicing encoder copies the bytes into
 * the event anyway). A slab is never written again once getAvro has moved on to
 * a new one (Writer.ensure growing it moves on too), so a view stays valid for
 * as long as it is held, across awaits and other records' hits; a slab is
 * freed once no view of it is left. 64 KiB holds some 200 shop (or merchant) hits.
 */
const AVRO_SLAB_BYTES = 64 * 1024
/** A new slab once less than this is left: a snapshot's Avro is well below it (a bigger one grows the slab). */
const AVRO_SLAB_MIN_ROOM = 4 * 1024

/** A stored entry as the Avro bytes of the table's schema (SnapshotTable.getAvro). */
export interface AvroSnapshot {
  /** The Avro binary encoding of the snapshot by its schema: what an event embedding it holds. */
  avro: Buffer
  /** The codec's captured field (a shop's merchantUid), or null. */
  captured: string | null
}

/** A table loaded by another loader process, with the codec over its own (frozen) string pools. */
interface SecondaryShard<T> {
  table: CompactTable
  codec: CompactCodec<T>
}

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
 * Two writers with different rules, kept in two tables:
 * - `applyFromTopic`: records of the compacted topic, written by the refresher
 *   (the single writer). Applied unconditionally in offset order, tombstones
 *   delete: the topic is the truth. They go to the topic table, which therefore
 *   always equals the topic up to the positions read: that is what a checkpoint
 *   holds (`topicState`), and what a cold load would rebuild.
 * - `putFetched` / `delete`: what this instance fetched from the API on a miss.
 *   Kept in a small overlay that answers first, only if it is not older than
 *   what the table holds, so that a concurrent refresher write with newer data
 *   is never overwritten by our older read. A topic record for the same uid
 *   (the refresher storing what we fetched, or anything newer) replaces it.
 *
 * The topic table can be sharded: a load by several loader processes (each a
 * share of the partitions, each with string pools of its own) hands over one
 * table per process. The first is the primary shard; the others are read
 * after it, and never written: a topic record for a uid goes to the primary
 * and removes the uid from the others, so a uid is in one shard at most.
 */
export class SnapshotTable<T extends Snapshot> {
  readonly #table = new CompactTable()
  /** Further topic tables of a sharded load (see above); empty for a load by one process. */
  #others: SecondaryShard<T>[] = []
  /** API reads not (yet) replaced by a topic record. */
  readonly #fetched = new CompactTable()
  /** Uids of the topic table the API said no longer exist (not yet confirmed by a tombstone). */
  readonly #fetchedDeleted = new Set<string>()
  /** Entries of `#fetched` whose uid is not in the topic table. */
  #fetchedOnly = 0
  readonly #codec: CompactCodec<T>
  readonly #writer: Writer
  /** Where getAvro writes, appending (see AVRO_SLAB_BYTES; not #writer: that one holds what a write is storing). */
  readonly #avroWriter = new Writer(AVRO_SLAB_BYTES)
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
    let size = this.#table.size + this.#fetchedOnly - this.#fetchedDeleted.size
    for (const shard of this.#others) size += shard.table.size
    return size
  }

  get memoryBytes(): number {
    let bytes = this.#table.memoryBytes + (this.#fetched.size === 0 ? 0 : this.#fetched.memoryBytes)
    for (const shard of this.#others) bytes += shard.table.memoryBytes
    return bytes
  }

  /** Topic table shards: 1, or one per loader process of a sharded load (until a cold load). */
  get shards(): number {
    return 1 + this.#others.length
  }

  /** A usable snapshot, or undefined when absent or (invalidations off) older than the limit. */
  get(uid: string): T | undefined {
    const value = this.#read(uid, (chunk, offset, codec) => codec.decode(chunk, offset, uid))
    if (value === undefined) return undefined
    if (!this.#invalidationsEnabled && this.#now() - value.fetchedAt > this.#maxAgeMs) return undefined
    return value
  }

  /**
   * What `get` finds, as Avro bytes written straight from the stored entry
   * (CompactCodec.toAvro), without the object: the ingest embeds them in the
   * enriched event as they are. The bytes are a view of a slab no later call
   * writes over (see AVRO_SLAB_BYTES): do not write into them.
   */
  getAvro(uid: string): AvroSnapshot | undefined {
    const writer = this.#avroWriter
    if (writer.buf.length - writer.pos < AVRO_SLAB_MIN_ROOM) writer.newBuffer(AVRO_SLAB_BYTES)
    const start = writer.pos
    this.#avroUid = uid
    if (this.#read(uid, this.#readAvro) !== true) return undefined
    return { avro: writer.buf.subarray(start, writer.pos), captured: this.#avroCaptured }
  }

  /** getAvro's reader, made once rather than a closure per hit: the uid in #avroUid, the captured value out in #avroCaptured. */
  #avroUid = ''
  #avroCaptured: string | null = null
  readonly #readAvro = (chunk: Buffer, offset: number, codec: CompactCodec<T>): boolean => {
    if (!this.#invalidationsEnabled && this.#now() - chunk.readDoubleLE(offset) > this.#maxAgeMs) return false
    codec.toAvro(this.#avroWriter, chunk, offset, this.#avroUid)
    this.#avroCaptured = codec.captured
    return true
  }

  /** fetchedAt of the stored entry whatever its age, without decoding it. */
  fetchedAtOf(uid: string): number | undefined {
    return this.#read(uid, this.#readFetchedAt)
  }

  applyFromTopic(uid: string, value: T | null): void {
    this.#supersedeFetched(uid)
    if (value === null) this.#table.delete(uid)
    else this.#put(this.#table, uid, value)
    this.#deleteFromOthers(uid)
  }

  /** The topic answered for this uid: our API read of it is superseded. */
  #supersedeFetched(uid: string): void {
    if (this.#fetched.size === 0 && this.#fetchedDeleted.size === 0) return
    if (this.#fetched.delete(uid) && !this.#topicHas(uid)) this.#fetchedOnly--
    this.#fetchedDeleted.delete(uid)
  }

  #topicHas(uid: string): boolean {
    if (this.#table.has(uid)) return true
    for (const shard of this.#others) if (shard.table.has(uid)) return true
    return false
  }

  /** A uid written to (or deleted from) the primary shard leaves the secondary ones. */
  #deleteFromOthers(uid: string): void {
    for (const shard of this.#others) shard.table.delete(uid)
  }

  /** Whether records written with `writer` can go through `applyAvroFromTopic` (the table's own schema). */
  readsAvro(writer: avro.Type): boolean {
    return writer.equals(this.#codec.type)
  }

  /**
   * `applyFromTopic` of a record straight from its Avro bytes (`avroBytes`
   * from `offset`, written with a schema `readsAvro` accepted), with no
   * object in between. Returns its fetchedAt, or undefined (and nothing is
   * applied) when its uid field is not `key`; throws on bytes that do not decode.
   */
  applyAvroFromTopic(key: Buffer, avroBytes: Buffer, offset: number): number | undefined {
    this.#writer.reset()
    const fetchedAt = this.#codec.transcode(this.#writer, avroBytes, offset)
    const { keyStart, keyLength } = this.#codec
    if (keyLength !== key.length) return undefined
    for (let i = 0; i < keyLength; i++) if (key[i] !== avroBytes[keyStart + i]) return undefined
    // The key as a string only when an API read may have to give way (not during a load).
    if (this.#fetched.size > 0 || this.#fetchedDeleted.size > 0 || this.#others.length > 0) {
      const uid = key.toString('utf8')
      this.#supersedeFetched(uid)
      this.#deleteFromOthers(uid)
    }
    this.#table.setBytes(key, 0, keyLength, this.#writer.buf, this.#writer.pos)
    return fetchedAt
  }

  /** Stores a snapshot read from the API unless the table already has a newer one. Returns whether it was stored. */
  putFetched(value: T): boolean {
    const current = this.fetchedAtOf(value.uid)
    if (current !== undefined && current > value.fetchedAt) return false
    if (!this.#fetched.has(value.uid) && !this.#topicHas(value.uid)) this.#fetchedOnly++
    this.#fetchedDeleted.delete(value.uid)
    this.#put(this.#fetched, value.uid, value)
    return true
  }

  /** The API said `uid` does not exist (any earlier API read of it is dropped too). */
  delete(uid: string): void {
    if (this.#fetched.delete(uid) && !this.#topicHas(uid)) this.#fetchedOnly--
    if (this.#topicHas(uid)) this.#fetchedDeleted.add(uid)
  }

  /** Hands the stored entries over (see CompactTable.exportState); the table is empty afterwards. */
  exportState(): CompactTableState {
    if (this.#fetched.size > 0 || this.#fetchedDeleted.size > 0 || this.#others.length > 0)
      throw new Error('only a loader\'s table (no API reads, one shard) can be handed over')
    return this.#table.exportState()
  }

  /**
   * The topic table as it is now (API reads excluded), one state per shard,
   * the primary first: what the topic holds up to the positions read. Valid
   * until the next `applyFromTopic`.
   */
  topicState(): CompactTableState[] {
    return [this.#table.peekState(), ...this.#others.map((shard) => shard.table.peekState())]
  }

  /** The primary shard's topic table (see `topicState`): what a loader ships while it loads. */
  primaryState(): CompactTableState {
    return this.#table.peekState()
  }

  restoreState(state: CompactTableState, owned = false): void {
    this.#table.restoreState(state, owned)
  }

  /** Adds a secondary shard (see the class comment) decoded by `codec`, which reads that shard's pools. */
  addShard(state: CompactTableState, codec: CompactCodec<T>, owned = false): void {
    const table = new CompactTable()
    table.restoreState(state, owned)
    this.#others.push({ table, codec })
  }

  clear(): void {
    this.#others = []
    this.#table.clear()
    this.#fetched.clear()
    this.#fetchedDeleted.clear()
    this.#fetchedOnly = 0
  }

  #read<R>(uid: string, read: (chunk: Buffer, offset: number, codec: CompactCodec<T>) => R): R | undefined {
    // The overlay is empty most of the time: then one lookup, as before it existed.
    if (this.#fetched.size > 0 || this.#fetchedDeleted.size > 0) {
      if (this.#fetchedDeleted.has(uid)) return undefined
      const fetched = this.#fetched.get(uid, (chunk, offset) => read(chunk, offset, this.#codec))
      if (fetched !== undefined) return fetched
    }
    const primary = this.#table.get(uid, (chunk, offset) => read(chunk, offset, this.#codec))
    if (primary !== undefined || this.#others.length === 0) return primary
    for (const shard of this.#others) {
      const value = shard.table.get(uid, (chunk, offset) => read(chunk, offset, shard.codec))
      if (value !== undefined) return value
    }
    return undefined
  }

  #put(table: CompactTable, uid: string, value: T): void {
    if (value.uid !== uid) throw new TypeError(`snapshot uid ${value.uid} does not match its key ${uid}`)
    this.#writer.reset()
    this.#codec.encode(this.#writer, value)
    table.set(uid, this.#writer.buf, this.#writer.pos)
  }
}

/** The shop and merchant tables of one ingest instance, sharing one string pool. */
export interface MerchantTables {
  shops: SnapshotTable<Shop>
  merchants: SnapshotTable<Merchant>
  /** Distinct pooled strings (categorical values shared by all entries). */
  pooledStrings(): number
  /**
   * Fingerprint of what the stored bytes depend on (schemas, codec options,
   * chunk size): a checkpoint of other tables is not restored into these.
   */
  readonly layout: string
  /**
   * The topic tables and string pools as they are now, API reads excluded
   * (what a checkpoint writes), one state per shard (see SnapshotTable), the
   * primary first. Valid until the next `applyFromTopic`.
   */
  topicState(): MerchantTablesState[]
  /**
   * Hands both tables and their string pools over as plain data plus
   * buffers (a table built by a loader moves to the serving thread or process
   * without being rebuilt); both tables are empty afterwards. Only for tables
   * of one shard (a loader's).
   */
  exportState(): MerchantTablesState
  /**
   * Takes over states from `exportState` (one per loader process) or
   * `topicState`; only into tables that are still empty. The first becomes
   * the primary shard, each further one that holds entries a secondary shard
   * with read-only pools of its own. `owned`: their index arrays are adopted,
   * not copied (see CompactTable).
   */
  restoreState(states: readonly MerchantTablesState[], owned?: boolean): void
  /** Empties both tables and the string pools (after a failed restore). */
  clear(): void
}

/** One shard's tables and the string pools their records refer to. */
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
const SHOP_POOL_BUDGETS = { merchantUid: 4_000_000 }
/** Bumped when the compact codec or CompactTable changes how it lays out bytes. */
const ENCODING_VERSION = 1

function shopCodecOver(pools: StringPools): CompactCodec<Shop> {
  return createCompactCodec<Shop>(avroSchema('Shop').type, pools, {
    keyField: 'uid',
    leadingLong: 'fetchedAt',
    inlineStrings: SHOP_INLINE,
    // Shops repeat their merchant's uid: worth pooling for far more merchants than the default budget.
    poolBudgets: SHOP_POOL_BUDGETS,
    // getAvro gives it besides the bytes: the merchant is looked up by it.
    capture: 'merchantUid',
  })
}

function merchantCodecOver(pools: StringPools): CompactCodec<Merchant> {
  return createCompactCodec<Merchant>(avroSchema('Merchant').type, pools, {
    keyField: 'uid',
    leadingLong: 'fetchedAt',
    inlineStrings: MERCHANT_INLINE,
  })
}

export function createMerchantTables(options: SnapshotTableOptions): MerchantTables {
  const pools = new StringPools()
  /** The pools of the secondary shards, in shard order. */
  let otherPools: StringPools[] = []
  const writer = new Writer()
  const shops = new SnapshotTable(shopCodecOver(pools), writer, options)
  const merchants = new SnapshotTable(merchantCodecOver(pools), writer, options)
  return {
    shops,
    merchants,
    pooledStrings: () => otherPools.reduce((n, p) => n + p.size, pools.size),
    layout: tablesLayout(),
    topicState: () => {
      const shopStates = shops.topicState()
      const merchantStates = merchants.topicState()
      return [pools, ...otherPools].map((p, i) => ({ pools: p.exportState(), shops: shopStates[i]!, merchants: merchantStates[i]! }))
    },
    exportState: () => ({
      pools: pools.exportState(),
      shops: shops.exportState(),
      merchants: merchants.exportState(),
    }),
    restoreState: (states, owned = false) => {
      if (shops.size > 0 || merchants.size > 0 || pools.size > 0)
        throw new Error('table state can only be restored into empty tables')
      const [primary, ...others] = states
      if (primary === undefined) throw new Error('no table state to restore')
      pools.restoreState(primary.pools)
      shops.restoreState(primary.shops, owned)
      merchants.restoreState(primary.merchants, owned)
      for (const state of others) {
        // A loader whose partitions were empty: nothing to look up there.
        if (state.shops.size === 0 && state.merchants.size === 0) continue
        const own = new StringPools()
        own.restoreFrozen(state.pools, pools)
        otherPools.push(own)
        shops.addShard(state.shops, shopCodecOver(own), owned)
        merchants.addShard(state.merchants, merchantCodecOver(own), owned)
      }
    },
    clear: () => {
      shops.clear()
      merchants.clear()
      pools.clear()
      otherPools = []
    },
  }
}

function tablesLayout(): string {
  const fingerprint = (name: 'Shop' | 'Merchant'): string =>
    (avroSchema(name).type as unknown as { fingerprint(algorithm: string): Buffer }).fingerprint('sha256').toString('hex')
  return createHash('sha256')
    .update(
      JSON.stringify({
        encoding: ENCODING_VERSION,
        chunkSize: CompactTable.CHUNK_SIZE,
        shop: fingerprint('Shop'),
        merchant: fingerprint('Merchant'),
        shopInline: SHOP_INLINE,
        merchantInline: MERCHANT_INLINE,
        shopPoolBudgets: SHOP_POOL_BUDGETS,
      }),
    )
    .digest('hex')
}
