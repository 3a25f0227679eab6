import type avro from 'avsc'

/**
 * A compact binary encoding of Avro records for the in-memory shop and merchant
 * tables, derived from the Avro schema so that it follows schema changes.
 *
 * Why not keep the Avro bytes: a shop snapshot is ~300 bytes of Avro, most of it
 * strings that repeat across shops (category name and icon, tags, city, zip,
 * country, merchant uid, coordinate precision). Those are stored once in a shared
 * `StringPool` and referenced by id. Each field path may add at most
 * `poolBudgetPerPath` distinct strings to the pool; past that (a field that turns
 * out to be unique per entity, like a URL) new values are written inline, so the
 * pool cannot grow with the number of entities; such URL-like values still pool
 * what precedes their last '/' (a chain's `https://www.brand.cz/stores/`). Fields
 * known to be unique (`inlineStrings`) skip the pool altogether. The key field
 * (`uid`) is not stored: the table already holds it as the key.
 *
 * Layout: a record starts with a presence bitmap (one bit per ["null", X] field,
 * so a null costs one bit), then its non-null fields in order; strings are a
 * tagged varint (pooled id, inline length, or pooled prefix; Reader.string); doubles and
 * longs are 8-byte float64 (longs here are timestamps and ids < 2^53); ints are
 * zig-zag varints; booleans one byte; enums a varint index; arrays and maps a
 * varint count then their items.
 */

export class StringPool {
  readonly #ids = new Map<string, number>()
  readonly #values: string[] = []

  /** The id of `value`, adding it when absent. */
  intern(value: string): number {
    let id = this.#ids.get(value)
    if (id === undefined) {
      id = this.#values.length
      this.#values.push(value)
      this.#ids.set(value, id)
    }
    return id
  }

  /** The id of `value` if pooled already. */
  find(value: string): number | undefined {
    return this.#ids.get(value)
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
    this.#ids.clear()
    this.#values.length = 0
  }

  /**
   * Appends `values` as the next ids, so a pool rebuilt on another thread keeps
   * the ids its encoded records refer to. Only an empty pool can be restored.
   */
  restore(values: readonly string[]): void {
    if (this.#values.length > 0) throw new Error('only an empty string pool can be restored')
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

  #utf8(len: number): string {
    const s = this.#view.toString('utf8', this.pos, this.pos + len)
    this.pos += len
    return s
  }
}

type Encode = (w: Writer, value: unknown) => void
type Decode = (r: Reader) => unknown

export interface CompactCodecOptions {
  /** Top-level string field held as the table key and not stored (e.g. `uid`). */
  keyField?: string
  /** Dotted paths of string fields unique per entity, always written inline. */
  inlineStrings?: readonly string[]
  /**
   * A non-null top-level `long` field written first, as float64 at offset 0, so it
   * can be read without decoding the entry (the tables' `fetchedAt`).
   */
  leadingLong?: string
  /** Distinct strings one field path may pool; default 65,536. */
  poolBudgetPerPath?: number
  /** Per-path overrides of the budget (e.g. a foreign key with many but repeating values). */
  poolBudgets?: Readonly<Record<string, number>>
}

export interface CompactCodec<T> {
  /** Encodes `value` into `writer` (after `writer.reset()` by the caller). */
  encode(writer: Writer, value: T): void
  /** Decodes one value starting at `offset`; `key` restores the key field. */
  decode(buf: Buffer, offset: number, key: string): T
}

interface FieldCodec {
  name: string
  /** The X of a ["null", X] union: the field is in the presence bitmap. */
  nullable: boolean
  enc: Encode
  dec: Decode
}

export function createCompactCodec<T>(
  type: avro.Type,
  pools: StringPools,
  options: CompactCodecOptions = {},
): CompactCodec<T> {
  const inline = new Set(options.inlineStrings ?? [])
  const keyField = options.keyField
  const leading = options.leadingLong
  const budget = options.poolBudgetPerPath ?? 65_536
  if (type.typeName !== 'record')
    throw new TypeError(`compact codec needs a record type, got ${type.typeName}`)
  const fields = (type as avro.types.RecordType).fields
  if (keyField !== undefined && !fields.some((f) => f.name === keyField && f.type.typeName === 'string')) {
    throw new TypeError(`key field ${keyField} must be a string field of ${type.name ?? 'the record'}`)
  }
  if (leading !== undefined && !fields.some((f) => f.name === leading && f.type.typeName === 'long')) {
    throw new TypeError(
      `leading field ${leading} must be a non-null long field of ${type.name ?? 'the record'}`,
    )
  }
  const body = compileRecord(
    fields.filter((f) => f.name !== keyField && f.name !== leading),
    '',
  )
  const reader = new Reader()

  function compileString(path: string): { enc: Encode; dec: Decode } {
    // One pool per path keeps the ids of small sets (category, tags) to one byte.
    const pool = pools.forPath(`${type.name ?? ''}:${path}`)
    const prefixes = pools.forPath(`${type.name ?? ''}:${path}:prefixes`)
    const dec: Decode = (r) => r.string(pool, prefixes)
    if (inline.has(path)) return { enc: (w, v) => w.inlineUtf8(v as string), dec }
    const limit = options.poolBudgets?.[path] ?? budget
    const pooledIn = (into: StringPool, value: string): number | undefined => {
      const id = into.find(value)
      if (id !== undefined || into.size >= limit) return id
      return into.intern(value)
    }
    return {
      enc: (w, v) => {
        const s = v as string
        const id = pooledIn(pool, s)
        if (id !== undefined) {
          w.varint(id * 4)
          return
        }
        // Past the budget: URL-like values of one site share everything up to the last '/'.
        const slash = s.lastIndexOf('/')
        const prefixId = slash > 0 ? pooledIn(prefixes, s.slice(0, slash + 1)) : undefined
        if (prefixId === undefined) w.inlineUtf8(s)
        else w.prefixedUtf8(prefixId, s.slice(slash + 1))
      },
      dec,
    }
  }

  function compileRecord(
    recordFields: readonly avro.types.Field[],
    prefix: string,
  ): { enc: Encode; dec: Decode } {
    const parts: FieldCodec[] = recordFields.map((f) => {
      const path = prefix === '' ? f.name : `${prefix}.${f.name}`
      const inner = nullableInner(f.type, path)
      const c = compile(inner ?? f.type, path)
      return { name: f.name, nullable: inner !== undefined, enc: c.enc, dec: c.dec }
    })
    const bitmapBytes = Math.ceil(parts.filter((p) => p.nullable).length / 8)
    return {
      enc: (w, v) => {
        const rec = v as Record<string, unknown>
        w.ensure(bitmapBytes)
        const bitmapAt = w.pos
        w.buf.fill(0, bitmapAt, bitmapAt + bitmapBytes)
        w.pos += bitmapBytes
        let bit = 0
        for (const p of parts) {
          const value = rec[p.name]
          if (p.nullable) {
            if (value !== null && value !== undefined) {
              w.buf[bitmapAt + (bit >> 3)] = (w.buf[bitmapAt + (bit >> 3)] as number) | (1 << (bit & 7))
              p.enc(w, value)
            }
            bit++
          } else {
            p.enc(w, value)
          }
        }
      },
      dec: (r) => {
        const bitmapAt = r.pos
        r.pos += bitmapBytes
        const out: Record<string, unknown> = {}
        let bit = 0
        for (const p of parts) {
          if (p.nullable) {
            const present = ((r.buf[bitmapAt + (bit >> 3)] as number) & (1 << (bit & 7))) !== 0
            out[p.name] = present ? p.dec(r) : null
            bit++
          } else {
            out[p.name] = p.dec(r)
          }
        }
        return out
      },
    }
  }

  /** X of a ["null", X] union; undefined for any other type. Other unions are refused. */
  function nullableInner(t: avro.Type, path: string): avro.Type | undefined {
    if (t.typeName !== 'union:unwrapped' && t.typeName !== 'union:wrapped') return undefined
    const branches = (t as avro.types.UnwrappedUnionType).types
    const other = branches.filter((b) => b.typeName !== 'null')
    if (t.typeName === 'union:wrapped' || branches.length !== 2 || other.length !== 1) {
      throw new TypeError(`${path}: only ["null", X] unions are supported by the compact codec`)
    }
    return other[0]
  }

  function compile(t: avro.Type, path: string): { enc: Encode; dec: Decode } {
    switch (t.typeName) {
      case 'null':
        return { enc: () => {}, dec: () => null }
      case 'boolean':
        return { enc: (w, v) => w.byte(v ? 1 : 0), dec: (r) => r.byte() === 1 }
      case 'int':
        return {
          enc: (w, v) => {
            const n = v as number
            w.varint(n >= 0 ? n * 2 : -n * 2 - 1)
          },
          dec: (r) => {
            const z = r.varint()
            return z % 2 === 0 ? z / 2 : -(z + 1) / 2
          },
        }
      case 'long':
      case 'float':
        return { enc: (w, v) => w.float64(v as number), dec: (r) => r.float64() }
      case 'double':
        return { enc: (w, v) => w.decimalOrFloat64(v as number), dec: (r) => r.decimalOrFloat64() }
      case 'string':
        return compileString(path)
      case 'enum': {
        const symbols = (t as avro.types.EnumType).symbols
        return {
          enc: (w, v) => {
            const i = symbols.indexOf(v as string)
            if (i < 0) throw new TypeError(`${path}: ${String(v)} is not a symbol of ${t.name ?? 'the enum'}`)
            w.varint(i)
          },
          dec: (r) => symbols[r.varint()],
        }
      }
      case 'array': {
        const item = compile((t as avro.types.ArrayType).itemsType, path)
        return {
          enc: (w, v) => {
            const arr = v as unknown[]
            w.varint(arr.length)
            for (const x of arr) item.enc(w, x)
          },
          dec: (r) => {
            const n = r.varint()
            const out = new Array<unknown>(n)
            for (let i = 0; i < n; i++) out[i] = item.dec(r)
            return out
          },
        }
      }
      case 'map': {
        const key = compileString(`${path}.<key>`)
        const value = compile((t as avro.types.MapType).valuesType as avro.Type, path)
        return {
          enc: (w, v) => {
            const entries = Object.entries(v as Record<string, unknown>)
            w.varint(entries.length)
            for (const [k, x] of entries) {
              key.enc(w, k)
              value.enc(w, x)
            }
          },
          dec: (r) => {
            const n = r.varint()
            const out: Record<string, unknown> = {}
            for (let i = 0; i < n; i++) {
              const k = key.dec(r) as string
              out[k] = value.dec(r)
            }
            return out
          },
        }
      }
      case 'record':
        return compileRecord((t as avro.types.RecordType).fields, path)
      default:
        if (nullableInner(t, path) !== undefined) {
          throw new TypeError(
            `${path}: a ["null", X] union inside an array or map is not supported by the compact codec`,
          )
        }
        throw new TypeError(`${path}: Avro type ${t.typeName} is not supported by the compact codec`)
    }
  }

  return {
    encode(writer, value) {
      const rec = value as Record<string, unknown>
      if (leading !== undefined) writer.float64(rec[leading] as number)
      body.enc(writer, rec)
    },
    decode(buf, offset, key) {
      reader.reset(buf, offset)
      const lead = leading === undefined ? undefined : reader.float64()
      const decoded = body.dec(reader) as Record<string, unknown>
      // Fields are assigned in schema order so decoded objects have the shape avsc produces.
      const out: Record<string, unknown> = {}
      for (const f of fields)
        out[f.name] = f.name === keyField ? key : f.name === leading ? lead : decoded[f.name]
      return out as T
    },
  }
}
