/**
 * The building blocks of the compact codec (compact-codec.ts): string pools, and
 * the reader and writer of the compact bytes.
 */
/** Slots of a new string pool's index (grown by doubling while at most half full). */
const MIN_POOL_CAPACITY = 16

/** Scratch space for the UTF-8 bytes of a string looked up by value. */
let scratch = Buffer.allocUnsafe(1024)

/**
 * FNV-1a of `len` bytes from `start`, folded to 30 bits so that it is a small
 * integer in V8 (a Map keyed by it hashes and compares without heap numbers).
 */
function hashBytes(buf: Uint8Array, start: number, len: number): number {
  let h = 0x811c9dc5 ^ len
  // Long values (URLs, addresses) by their first and last 16 bytes: where values
  // of one field differ; the comparison on a hit is exact anyway.
  const head = len > 32 ? start + 16 : start + len
  for (let i = start; i < head; i++) {
    h ^= buf[i] as number
    h = Math.imul(h, 0x01000193)
  }
  for (let i = len > 32 ? start + len - 16 : head; i < start + len; i++) {
    h ^= buf[i] as number
    h = Math.imul(h, 0x01000193)
  }
  return (h ^ (h >>> 30)) & 0x3fffffff
}

/** Whether `value`'s UTF-8 encoding is the `len` bytes of `buf` from `start`. */
function equalsUtf8(value: string, buf: Uint8Array, start: number, len: number): boolean {
  if (value.length === len) {
    // Equal lengths: equal only if every char is ASCII and matches its byte.
    for (let i = 0; i < len; i++) {
      const c = value.charCodeAt(i)
      if (c >= 0x80 || c !== buf[start + i]) return false
    }
    return true
  }
  if (value.length > len || Buffer.byteLength(value, 'utf8') !== len) return false
  if (scratch.length < len) scratch = Buffer.allocUnsafe(len * 2)
  scratch.write(value, 0, 'utf8')
  for (let i = 0; i < len; i++) if (scratch[i] !== buf[start + i]) return false
  return true
}

/**
 * Distinct strings with small integer ids. Looked up by value or by UTF-8
 * bytes (the table loader reads strings straight out of Avro records and only
 * makes a JS string of a value the pool does not hold yet), through one index
 * keyed by the hash of the UTF-8 bytes.
 *
 * The index is open addressing over one Int32Array of (hash, id + 1) pairs,
 * not a Map: a pool of half a million merchant uids is looked up once per shop
 * at load, and a Map's lookup there cost two dependent cache misses (bucket,
 * then entry) before the string's; the pair array costs one (issue 22: the
 * pools' lookups were the largest self time of a 5M-shop load).
 */
export class StringPool {
  /** Pairs (hash, id + 1); id + 1 = 0: an empty slot. Capacity a power of two, at most half full. */
  #index = new Int32Array(2 * MIN_POOL_CAPACITY)
  #mask = MIN_POOL_CAPACITY - 1
  readonly #values: string[] = []
  /** Read-only (restoreFrozen): ids resolve, nothing is added or looked up by value. */
  #frozen = false

  /** The id of `value`, adding it when absent. */
  intern(value: string): number {
    if (this.#frozen) throw new Error('a frozen string pool (a secondary table shard\'s) takes no new strings')
    const len = this.#toScratch(value)
    return this.findBytes(scratch, 0, len) ?? this.#add(value, hashBytes(scratch, 0, len))
  }

  /** The id of `value` if pooled already. */
  find(value: string): number | undefined {
    return this.findBytes(scratch, 0, this.#toScratch(value))
  }

  /** The id of the string whose UTF-8 bytes are `buf[start, start + len)`, if pooled. */
  findBytes(buf: Uint8Array, start: number, len: number): number | undefined {
    const h = hashBytes(buf, start, len)
    const index = this.#index
    const mask = this.#mask
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const entry = index[2 * i + 1] as number
      if (entry === 0) return undefined
      if (index[2 * i] === h && equalsUtf8(this.#values[entry - 1] as string, buf, start, len)) return entry - 1
    }
  }

  /** The id of those bytes' string, adding it when absent. */
  internBytes(buf: Buffer, start: number, len: number): number {
    if (this.#frozen) throw new Error('a frozen string pool (a secondary table shard\'s) takes no new strings')
    return this.findBytes(buf, start, len) ?? this.#add(buf.toString('utf8', start, start + len), hashBytes(buf, start, len))
  }

  #toScratch(value: string): number {
    if (scratch.length < value.length * 3) scratch = Buffer.allocUnsafe(value.length * 3)
    return scratch.write(value, 0, 'utf8')
  }

  #add(value: string, hash: number): number {
    const id = this.#values.length
    this.#values.push(value)
    if ((id + 1) * 2 > this.#mask + 1) this.#grow()
    this.#place(hash, id)
    return id
  }

  #place(hash: number, id: number): void {
    const index = this.#index
    const mask = this.#mask
    let i = hash & mask
    while (index[2 * i + 1] !== 0) i = (i + 1) & mask
    index[2 * i] = hash
    index[2 * i + 1] = id + 1
  }

  #grow(): void {
    const old = this.#index
    const capacity = (this.#mask + 1) * 2
    this.#index = new Int32Array(2 * capacity)
    this.#mask = capacity - 1
    for (let i = 0; i < old.length; i += 2) if (old[i + 1] !== 0) this.#place(old[i] as number, (old[i + 1] as number) - 1)
  }

  get(id: number): string {
    const value = this.#values[id]
    if (value === undefined) throw new RangeError(`string pool has no id ${id}`)
    return value
  }

  get size(): number {
    return this.#values.length
  }

  /** Every pooled string, in id order. */
  values(): readonly string[] {
    return this.#values
  }

  clear(): void {
    this.#index = new Int32Array(2 * MIN_POOL_CAPACITY)
    this.#mask = MIN_POOL_CAPACITY - 1
    this.#values.length = 0
    this.#frozen = false
  }

  /**
   * Restores `values` as a read-only pool: ids resolve (`get`), but there is
   * no index, so nothing is found or added by value. A string `primary` holds
   * too is taken from it, so the two pools share one copy. This is the pool
   * of a secondary table shard (SnapshotTable): its records are only decoded,
   * every write goes to the primary shard and its pools.
   */
  restoreFrozen(values: readonly string[], primary: StringPool | undefined): void {
    if (this.#values.length > 0) throw new Error('only an empty string pool can be restored')
    this.#frozen = true
    for (const value of values) {
      const id = primary?.find(value)
      this.#values.push(id === undefined ? value : (primary!.get(id)))
    }
  }

  /**
   * Appends `values` as the next ids, so a pool rebuilt on another thread keeps
   * the ids its encoded records refer to. Only an empty pool can be restored.
   */
  restore(values: readonly string[]): void {
    if (this.#values.length > 0) throw new Error('only an empty string pool can be restored')
    // Sized once for all of them: a warm restart restores half a million merchant uids.
    let capacity = MIN_POOL_CAPACITY
    while (values.length * 2 > capacity) capacity *= 2
    this.#index = new Int32Array(2 * capacity)
    this.#mask = capacity - 1
    for (const value of values) this.intern(value)
    if (this.#values.length !== values.length) throw new Error('a pool state holds a string twice')
  }
}

/** The pools of one table family, one per field path (created on first use). */
export class StringPools {
  readonly #byPath = new Map<string, StringPool>()

  forPath(path: string): StringPool {
    let pool = this.#byPath.get(path)
    if (pool === undefined) {
      pool = new StringPool()
      this.#byPath.set(path, pool)
    }
    return pool
  }

  /** Distinct pooled strings over every path. */
  get size(): number {
    let n = 0
    for (const pool of this.#byPath.values()) n += pool.size
    return n
  }

  /** Empties every pool (the codecs keep their pool objects). */
  clear(): void {
    for (const pool of this.#byPath.values()) pool.clear()
  }

  /** Every pool's strings by path (plain data, for another thread). */
  exportState(): Record<string, string[]> {
    const state: Record<string, string[]> = {}
    for (const [path, pool] of this.#byPath) state[path] = [...pool.values()]
    return state
  }

  /**
   * Fills the pools from `exportState` of pools that encoded with the same
   * schemas. Codecs keep their pool objects, so the pools are filled in place.
   */
  restoreState(state: Readonly<Record<string, readonly string[]>>): void {
    for (const [path, values] of Object.entries(state)) this.forPath(path).restore(values)
  }

  /**
   * Fills these (empty) pools read-only (`StringPool.restoreFrozen`), sharing
   * the strings `primary` holds: the pools of a secondary table shard.
   */
  restoreFrozen(state: Readonly<Record<string, readonly string[]>>, primary: StringPools): void {
    for (const [path, values] of Object.entries(state)) this.forPath(path).restoreFrozen(values, primary.#byPath.get(path))
  }
}

/** Doubles with at most this many decimals (GPS to 1 cm) are stored as scaled integers. */
const DECIMAL_SCALE = 1e7
const MAX_SCALED = 2 ** 50

/** Growable write buffer reused for every encode (no per-record allocation but the result copy). */
export class Writer {
  buf: Buffer
  pos = 0

  constructor(initialSize = 4096) {
    this.buf = Buffer.allocUnsafe(initialSize)
  }

  reset(): void {
    this.pos = 0
  }

  /** Continues in a fresh buffer of `size` bytes, leaving the old one (and any view of it) untouched. */
  newBuffer(size: number): void {
    this.buf = Buffer.allocUnsafe(size)
    this.pos = 0
  }

  ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.pos + bytes) size *= 2
    const next = Buffer.allocUnsafe(size)
    this.buf.copy(next, 0, 0, this.pos)
    this.buf = next
  }

  varint(value: number): void {
    this.ensure(10)
    let v = value
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80
      v = Math.floor(v / 0x80)
    }
    this.buf[this.pos++] = v
  }

  byte(value: number): void {
    this.ensure(1)
    this.buf[this.pos++] = value
  }

  float64(value: number): void {
    this.ensure(8)
    this.buf.writeDoubleLE(value, this.pos)
    this.pos += 8
  }

  /**
   * A double as a zig-zag varint of `value * 1e7` times 2 when that is exact
   * (coordinates: 4-5 bytes instead of 8), else the marker 1 and a float64.
   */
  decimalOrFloat64(value: number): void {
    const scaled = Math.round(value * DECIMAL_SCALE)
    if (Math.abs(scaled) < MAX_SCALED && scaled / DECIMAL_SCALE === value && !Object.is(value, -0)) {
      this.varint((scaled >= 0 ? scaled * 2 : -scaled * 2 - 1) * 2)
    } else {
      this.varint(1)
      this.float64(value)
    }
  }

  /** Tag `length*4+1` then the UTF-8 bytes (see Reader.string for the tags). */
  inlineUtf8(value: string): void {
    const len = Buffer.byteLength(value, 'utf8')
    this.varint(len * 4 + 1)
    this.ensure(len)
    this.pos += this.buf.write(value, this.pos, 'utf8')
  }

  /** As inlineUtf8, from UTF-8 bytes. */
  inlineBytes(src: Buffer, start: number, len: number): void {
    this.varint(len * 4 + 1)
    this.#copy(src, start, len)
  }

  /** As prefixedUtf8, the suffix from UTF-8 bytes. */
  prefixedBytes(prefixId: number, src: Buffer, start: number, len: number): void {
    this.varint(prefixId * 4 + 2)
    this.varint(len)
    this.#copy(src, start, len)
  }

  /** No view object per copy: a loop for the short strings most are, a native copy for long ones. */
  #copy(src: Buffer, start: number, len: number): void {
    this.ensure(len)
    if (len < 48) {
      const buf = this.buf
      const at = this.pos
      for (let i = 0; i < len; i++) buf[at + i] = src[start + i] as number
    } else src.copy(this.buf, this.pos, start, start + len)
    this.pos += len
  }

  /** Inserts `value` as a varint at `at` (earlier than `pos`), moving what follows. */
  insertVarint(at: number, value: number): void {
    let size = 1
    for (let v = value; v >= 0x80; v = Math.floor(v / 0x80)) size++
    this.ensure(size)
    this.buf.copyWithin(at + size, at, this.pos)
    let p = at
    let v = value
    while (v >= 0x80) {
      this.buf[p++] = (v % 0x80) | 0x80
      v = Math.floor(v / 0x80)
    }
    this.buf[p] = v
    this.pos += size
  }

  // --- Avro binary encoding (CompactCodec.toAvro) ----------------------------------

  /** An Avro long: zig-zag varint (exact for |value| < 2^52, as avsc writes numbers). */
  avroLong(value: number): void {
    this.varint(value >= 0 ? value * 2 : -value * 2 - 1)
  }

  /** An Avro float: 4 bytes, little-endian. */
  float32(value: number): void {
    this.ensure(4)
    this.buf.writeFloatLE(value, this.pos)
    this.pos += 4
  }

  /**
   * An Avro string: byte length as a long, then UTF-8. A short ASCII one is copied
   * char by char in one pass (each char checked as it is written; a non-ASCII one
   * falls through to the UTF-8 write, which overwrites what the pass wrote).
   */
  avroString(value: string): void {
    const n = value.length
    if (n < 64) {
      this.ensure(n + 1)
      const buf = this.buf
      const at = this.pos + 1
      let i = 0
      for (; i < n; i++) {
        const c = value.charCodeAt(i)
        if (c >= 0x80) break
        buf[at + i] = c
      }
      if (i === n) {
        // n < 64: the length is one zig-zag varint byte.
        buf[at - 1] = n * 2
        this.pos = at + n
        return
      }
    }
    const len = Buffer.byteLength(value, 'utf8')
    this.avroLong(len)
    this.ensure(len)
    this.pos += this.buf.write(value, this.pos, 'utf8')
  }

  /** An Avro string from its UTF-8 bytes. */
  avroStringBytes(src: Buffer, start: number, len: number): void {
    this.avroLong(len)
    this.#copy(src, start, len)
  }

  /** An Avro string of a pooled prefix and a suffix given as UTF-8 bytes. */
  avroPrefixedString(prefix: string, src: Buffer, start: number, len: number): void {
    const prefixLength = Buffer.byteLength(prefix, 'utf8')
    this.avroLong(prefixLength + len)
    this.ensure(prefixLength)
    this.pos += this.buf.write(prefix, this.pos, 'utf8')
    this.#copy(src, start, len)
  }

  /** Tag `prefixId*4+2`, then varint length and UTF-8 bytes of the suffix. */
  prefixedUtf8(prefixId: number, suffix: string): void {
    this.varint(prefixId * 4 + 2)
    const len = Buffer.byteLength(suffix, 'utf8')
    this.varint(len)
    this.ensure(len)
    this.pos += this.buf.write(suffix, this.pos, 'utf8')
  }
}

export class Reader {
  buf: Uint8Array = new Uint8Array(0)
  pos = 0
  #view: Buffer = Buffer.alloc(0)

  reset(buf: Buffer, offset: number): void {
    this.#view = buf
    this.buf = buf
    this.pos = offset
  }

  varint(): number {
    let result = 0
    let factor = 1
    for (;;) {
      const b = this.buf[this.pos++] as number
      result += (b & 0x7f) * factor
      if (b < 0x80) return result
      factor *= 0x80
    }
  }

  byte(): number {
    return this.buf[this.pos++] as number
  }

  float64(): number {
    const v = this.#view.readDoubleLE(this.pos)
    this.pos += 8
    return v
  }

  decimalOrFloat64(): number {
    const tag = this.varint()
    if (tag === 1) return this.float64()
    const z = tag / 2
    return (z % 2 === 0 ? z / 2 : -(z + 1) / 2) / DECIMAL_SCALE
  }

  /**
   * A string written as one of: tag `id*4` (pooled), `length*4+1` + UTF-8
   * (inline), or `prefixId*4+2` + varint length + UTF-8 suffix (pooled prefix,
   * for URL-like values that differ only after their last '/').
   */
  string(pool: StringPool, prefixes: StringPool): string {
    const tag = this.varint()
    const kind = tag % 4
    if (kind === 0) return pool.get(tag / 4)
    if (kind === 1) return this.#utf8((tag - 1) / 4)
    const prefix = prefixes.get((tag - 2) / 4)
    return prefix + this.#utf8(this.varint())
  }

  /** The string at the position (see `string`) written into `w` as an Avro string, with no JS string for inline ones. */
  avroString(w: Writer, pool: StringPool, prefixes: StringPool): void {
    const tag = this.varint()
    const kind = tag % 4
    if (kind === 0) {
      w.avroString(pool.get(tag / 4))
      return
    }
    const prefix = kind === 1 ? undefined : prefixes.get((tag - 2) / 4)
    const len = kind === 1 ? (tag - 1) / 4 : this.varint()
    if (prefix === undefined) w.avroStringBytes(this.#view, this.pos, len)
    else w.avroPrefixedString(prefix, this.#view, this.pos, len)
    this.pos += len
  }

  #utf8(len: number): string {
    const s = this.#view.toString('utf8', this.pos, this.pos + len)
    this.pos += len
    return s
  }
}
