import type avro from 'avsc'
import type { Database } from 'lmdb'
import type { SnapshotStore } from '../snapshot-store.ts'
import { MAX_AGE_WITHOUT_INVALIDATIONS_MS, type AvroSnapshot, type Snapshot, type SnapshotTableOptions } from '../snapshot-table.ts'
import { AvroFieldLocator, readLong } from './avro-fields.ts'

/**
 * Stored value: fetchedAt (float64 LE, read without decoding), the captured
 * field's length (uint16 LE, NO_CAPTURE for null) and UTF-8 bytes, then the
 * record's Avro bytes by the table's schema, as the enriched event embeds them.
 */
const HEAD = 10
const NO_CAPTURE = 0xffff

type Writes = Map<string, Buffer | null>

/**
 * One shop or merchant table in LMDB (INGEST_TABLE_STORE=lmdb), with the
 * semantics of SnapshotTable: topic records applied unconditionally in offset
 * order (tombstones delete) go to the database; API reads live in an
 * in-memory overlay that answers first unless older than the topic's entry,
 * and give way to any topic record of their uid.
 *
 * Topic records are not written one by one: they collect in `pending` (read
 * from there at once, so a reader sees a record as soon as it is applied) and
 * LmdbMerchantTables.commit writes them in one LMDB transaction together with
 * the positions they bring the table to.
 */
export class LmdbSnapshotTable<T extends Snapshot> implements SnapshotStore<T> {
  readonly #db: Database<Buffer, string>
  readonly #type: avro.Type
  readonly #locator: AvroFieldLocator
  /** Index of the string branch of the captured field's union, or -1 when it is a plain string; undefined: no capture. */
  readonly #captureBranch: number | undefined
  readonly #capture: string | undefined
  #pending: Writes = new Map()
  /** Handed to commits that are not durable yet, oldest first. */
  readonly #committing: Writes[] = []
  readonly #fetched = new Map<string, Buffer>()
  readonly #fetchedDeleted = new Set<string>()
  #fetchedOnly = 0
  readonly #at = [0, 0, 0]
  readonly #invalidationsEnabled: boolean
  readonly #maxAgeMs: number
  readonly #now: () => number

  constructor(db: Database<Buffer, string>, type: avro.Type, options: SnapshotTableOptions & { capture?: string }) {
    this.#db = db
    this.#type = type
    this.#capture = options.capture
    const schema = type.schema() as { fields: Array<{ name: string; type: unknown }> }
    this.#locator = new AvroFieldLocator(schema as never, ['uid', 'fetchedAt', ...(options.capture === undefined ? [] : [options.capture])])
    if (options.capture !== undefined) {
      const field = schema.fields.find((f) => f.name === options.capture)!
      this.#captureBranch = Array.isArray(field.type) ? field.type.indexOf('string') : -1
    }
    this.#invalidationsEnabled = options.invalidationsEnabled
    this.#maxAgeMs = options.maxAgeMs ?? MAX_AGE_WITHOUT_INVALIDATIONS_MS
    this.#now = options.now ?? Date.now
  }

  /** Entries, counting the writes not committed yet and the API reads. */
  get size(): number {
    let size = (this.#db.getStats() as { entryCount: number }).entryCount
    if (this.#pending.size > 0 || this.#committing.length > 0) {
      const latest: Writes = new Map()
      for (const writes of [...this.#committing, this.#pending]) for (const [uid, v] of writes) latest.set(uid, v)
      for (const [uid, v] of latest) size += (v === null ? 0 : 1) - (this.#db.doesExist(uid) ? 1 : 0)
    }
    return size + this.#fetchedOnly - this.#fetchedDeleted.size
  }

  /** Bytes of the database's pages (mapped from its file, not the process's heap) and of the API reads. */
  get memoryBytes(): number {
    const s = this.#db.getStats() as { pageSize: number; treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number }
    let bytes = s.pageSize * (s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages)
    for (const value of this.#fetched.values()) bytes += value.length
    return bytes
  }

  get shards(): number {
    return 1
  }

  get(uid: string): T | undefined {
    const stored = this.#usable(uid)
    if (stored === undefined) return undefined
    return this.#type.fromBuffer(stored.subarray(HEAD + capturedLength(stored), stored.length)) as T
  }

  getAvro(uid: string): AvroSnapshot | undefined {
    const stored = this.#usable(uid)
    if (stored === undefined) return undefined
    const length = stored.readUInt16LE(8)
    const captured = length === NO_CAPTURE ? null : stored.toString('utf8', HEAD, HEAD + length)
    // A copy: getBinaryFast's buffer is reused by the next read. Its `length` is the entry's, but
    // the view spans lmdb-js's whole read buffer: every subarray gives its end.
    return { avro: Buffer.from(stored.subarray(HEAD + capturedLength(stored), stored.length)), captured }
  }

  fetchedAtOf(uid: string): number | undefined {
    return this.#read(uid)?.readDoubleLE(0)
  }

  applyFromTopic(uid: string, value: T | null): void {
    this.#supersedeFetched(uid)
    if (value === null) {
      this.#pending.set(uid, null)
      return
    }
    if (value.uid !== uid) throw new TypeError(`snapshot uid ${value.uid} does not match its key ${uid}`)
    const captured = this.#capture === undefined ? undefined : ((value as unknown as Record<string, string | null>)[this.#capture] ?? null)
    this.#pending.set(uid, this.#encode(this.#type.toBuffer(value), 0, value.fetchedAt, captured))
  }

  readsAvro(writer: avro.Type): boolean {
    return writer.equals(this.#type)
  }

  applyAvroFromTopic(key: Buffer, avroBytes: Buffer, offset: number): number | undefined {
    const at = this.#at
    const end = this.#locator.locate(avroBytes, offset, at)
    if (end !== avroBytes.length) throw new RangeError('the value is not one record of the table\'s schema')
    const [uidLength, uidStart] = readLong(avroBytes, at[0]!)
    if (uidLength !== key.length || avroBytes.compare(key, 0, key.length, uidStart, uidStart + uidLength) !== 0) return undefined
    const [fetchedAt] = readLong(avroBytes, at[1]!)
    let captured: string | null | undefined
    if (this.#captureBranch !== undefined) {
      let pos = at[2]!
      let branch = -1
      if (this.#captureBranch >= 0) [branch, pos] = readLong(avroBytes, pos)
      if (branch === this.#captureBranch) {
        const [length, start] = readLong(avroBytes, pos)
        captured = avroBytes.toString('utf8', start, start + length)
      } else captured = null
    }
    const uid = key.toString('utf8')
    this.#supersedeFetched(uid)
    this.#pending.set(uid, this.#encode(avroBytes, offset, fetchedAt, captured))
    return fetchedAt
  }

  putFetched(value: T): boolean {
    const current = this.fetchedAtOf(value.uid)
    if (current !== undefined && current > value.fetchedAt) return false
    if (!this.#fetched.has(value.uid) && !this.#topicHas(value.uid)) this.#fetchedOnly++
    this.#fetchedDeleted.delete(value.uid)
    const captured = this.#capture === undefined ? undefined : ((value as unknown as Record<string, string | null>)[this.#capture] ?? null)
    this.#fetched.set(value.uid, this.#encode(this.#type.toBuffer(value), 0, value.fetchedAt, captured))
    return true
  }

  delete(uid: string): void {
    if (this.#fetched.delete(uid) && !this.#topicHas(uid)) this.#fetchedOnly--
    if (this.#topicHas(uid)) this.#fetchedDeleted.add(uid)
  }

  /** The topic records applied since the last call, for a commit (LmdbMerchantTables.commit); read from there until `settle`. */
  takePending(): Writes {
    const writes = this.#pending
    this.#pending = new Map()
    if (writes.size > 0) this.#committing.push(writes)
    return writes
  }

  /** The commit of `writes` is durable (or failed): the database answers for them now. */
  settle(writes: Writes): void {
    const index = this.#committing.indexOf(writes)
    if (index >= 0) this.#committing.splice(index, 1)
  }

  /** Forgets the API reads and the uncommitted writes (the store was emptied). */
  clear(): void {
    this.#pending = new Map()
    this.#committing.length = 0
    this.#fetched.clear()
    this.#fetchedDeleted.clear()
    this.#fetchedOnly = 0
  }

  #usable(uid: string): Buffer | undefined {
    const stored = this.#read(uid)
    if (stored === undefined) return undefined
    if (!this.#invalidationsEnabled && this.#now() - stored.readDoubleLE(0) > this.#maxAgeMs) return undefined
    return stored
  }

  #read(uid: string): Buffer | undefined {
    if (this.#fetched.size > 0 || this.#fetchedDeleted.size > 0) {
      if (this.#fetchedDeleted.has(uid)) return undefined
      const fetched = this.#fetched.get(uid)
      if (fetched !== undefined) return fetched
    }
    return this.#stored(uid)
  }

  /** The topic's entry: the newest uncommitted write, else the database's. */
  #stored(uid: string): Buffer | undefined {
    if (this.#pending.size > 0 && this.#pending.has(uid)) return this.#pending.get(uid) ?? undefined
    for (let i = this.#committing.length - 1; i >= 0; i--) {
      const writes = this.#committing[i]!
      if (writes.has(uid)) return writes.get(uid) ?? undefined
    }
    return this.#db.getBinaryFast(uid)
  }

  #topicHas(uid: string): boolean {
    return this.#stored(uid) !== undefined
  }

  #supersedeFetched(uid: string): void {
    if (this.#fetched.size === 0 && this.#fetchedDeleted.size === 0) return
    if (this.#fetched.delete(uid) && !this.#topicHas(uid)) this.#fetchedOnly--
    this.#fetchedDeleted.delete(uid)
  }

  #encode(avroBytes: Buffer, offset: number, fetchedAt: number, captured: string | null | undefined): Buffer {
    const capturedBytes = captured === undefined || captured === null ? 0 : Buffer.byteLength(captured)
    const out = Buffer.allocUnsafe(HEAD + capturedBytes + avroBytes.length - offset)
    out.writeDoubleLE(fetchedAt, 0)
    out.writeUInt16LE(captured === undefined || captured === null ? NO_CAPTURE : capturedBytes, 8)
    if (capturedBytes > 0) out.write(captured!, HEAD, 'utf8')
    avroBytes.copy(out, HEAD + capturedBytes, offset)
    return out
  }
}

function capturedLength(stored: Buffer): number {
  const length = stored.readUInt16LE(8)
  return length === NO_CAPTURE ? 0 : length
}
