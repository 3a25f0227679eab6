import type avro from 'avsc'
import { AvroCursor } from './avro-cursor.ts'
import { Reader, StringPool, StringPools, Writer } from './compact-io.ts'

export { Reader, StringPool, StringPools, Writer }

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

type Encode = (w: Writer, value: unknown) => void
type Decode = (r: Reader) => unknown
/** Reads one Avro value (of the codec's own schema) and writes its compact form: no JS object in between. */
type Transcode = (a: AvroCursor, w: Writer) => void
/** Reads one compact value and writes its Avro binary encoding: the other way, no JS object either. */
type ToAvro = (r: Reader, w: Writer) => void
interface Compiled {
  enc: Encode
  dec: Decode
  tr: Transcode
  av: ToAvro
}

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
  /**
   * A top-level string or ["null", "string"] field whose value `toAvro` also
   * gives back (`captured`): a shop's merchantUid, which the caller needs
   * besides the bytes.
   */
  capture?: string
}

export interface CompactCodec<T> {
  /** Encodes `value` into `writer` (after `writer.reset()` by the caller). */
  encode(writer: Writer, value: T): void
  /** Decodes one value starting at `offset`; `key` restores the key field. */
  decode(buf: Buffer, offset: number, key: string): T
  /** The Avro type the encoding derives from (Avro bytes of an equal schema can be transcoded). */
  readonly type: avro.Type
  /**
   * Writes into `writer` (after `writer.reset()`) exactly what `encode` writes
   * for the value whose Avro binary encoding, by `type`, is `avro[offset..]`,
   * without decoding it into an object. Returns the leading long (or 0); the
   * key field's bytes are at `keyStart`/`keyLength` of the last call. Throws
   * when the bytes are not a value of `type`.
   */
  transcode(writer: Writer, avro: Buffer, offset: number): number
  readonly keyStart: number
  readonly keyLength: number
  /**
   * Writes into `writer` (appending) the Avro binary encoding, by `type`, of
   * the value stored at `buf[offset..]` with key `key`: the bytes avsc writes
   * for what `decode` returns, without making that object.
   */
  toAvro(writer: Writer, buf: Buffer, offset: number, key: string): void
  /** The `capture` field's value in the last `toAvro` (null when absent or not configured). */
  readonly captured: string | null
}

/** Kinds of a record's fields in toAvro's order: the top level's key or leading field, a ["null", X] field, any other. */
const AV_ASIDE = 0
const AV_NULLABLE = 1
const AV_PLAIN = 2

interface FieldCodec {
  name: string
  /** The X of a ["null", X] union: the field is in the presence bitmap. */
  nullable: boolean
  enc: Encode
  dec: Decode
  tr: Transcode
  av: ToAvro
  /** Branch index of "null" in the field's union (nullable fields). */
  nullBranch: number
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
  const capture = options.capture
  if (
    capture !== undefined &&
    !fields.some((f) => f.name === capture && (f.type.typeName === 'string' || nullableInner(f.type, capture)?.typeName === 'string'))
  ) {
    throw new TypeError(`captured field ${capture} must be a string or ["null", "string"] field of ${type.name ?? 'the record'}`)
  }
  // What the top level's transcoding sets aside: the key's bytes and the leading long.
  const last = { keyStart: 0, keyLength: 0, lead: 0 }
  // What toAvro writes where the key and leading fields are, and the captured value.
  const toAvroState = { key: '', lead: 0, captured: null as string | null }
  const body = compileRecord(
    fields.filter((f) => f.name !== keyField && f.name !== leading),
    '',
    fields,
    (name, a) => {
      if (name === leading) last.lead = a.long()
      else {
        last.keyLength = a.stringLength()
        last.keyStart = a.pos - last.keyLength
      }
    },
    (name, w) => {
      if (name === leading) w.avroLong(toAvroState.lead)
      else w.avroString(toAvroState.key)
    },
  )
  const reader = new Reader()
  const cursor = new AvroCursor()

  function compileString(path: string): Compiled {
    // One pool per path keeps the ids of small sets (category, tags) to one byte.
    const pool = pools.forPath(`${type.name ?? ''}:${path}`)
    const prefixes = pools.forPath(`${type.name ?? ''}:${path}:prefixes`)
    const dec: Decode = (r) => r.string(pool, prefixes)
    const av: ToAvro = (r, w) => r.avroString(w, pool, prefixes)
    const inlineTr: Transcode = (a, w) => {
      const len = a.stringLength()
      w.inlineBytes(a.buf, a.pos - len, len)
    }
    if (inline.has(path)) return { enc: (w, v) => w.inlineUtf8(v as string), dec, tr: inlineTr, av }
    const limit = options.poolBudgets?.[path] ?? budget
    const pooledBytes = (into: StringPool, buf: Buffer, start: number, len: number): number | undefined => {
      const id = into.findBytes(buf, start, len)
      if (id !== undefined || into.size >= limit) return id
      return into.internBytes(buf, start, len)
    }
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
      av,
      // As `enc`, on the UTF-8 bytes: '/' is one byte that never occurs inside a multi-byte character.
      tr: (a, w) => {
        const len = a.stringLength()
        const start = a.pos - len
        const id = pooledBytes(pool, a.buf, start, len)
        if (id !== undefined) {
          w.varint(id * 4)
          return
        }
        let slash = -1
        for (let i = len - 1; i > 0; i--)
          if (a.buf[start + i] === 0x2f) {
            slash = i
            break
          }
        const prefixId = slash > 0 ? pooledBytes(prefixes, a.buf, start, slash + 1) : undefined
        if (prefixId === undefined) w.inlineBytes(a.buf, start, len)
        else w.prefixedBytes(prefixId, a.buf, start + slash + 1, len - slash - 1)
      },
    }
  }

  /**
   * `avroFields` (default `recordFields`) are the fields as the Avro bytes hold
   * them; those not in `recordFields` (the top level's key and leading fields)
   * go to `aside` when transcoding.
   */
  function compileRecord(
    recordFields: readonly avro.types.Field[],
    prefix: string,
    avroFields: readonly avro.types.Field[] = recordFields,
    aside?: (name: string, a: AvroCursor) => void,
    avAside?: (name: string, w: Writer) => void,
  ): Compiled {
    const parts: FieldCodec[] = recordFields.map((f) => {
      const path = prefix === '' ? f.name : `${prefix}.${f.name}`
      const inner = nullableInner(f.type, path)
      const c = compile(inner ?? f.type, path)
      const nullBranch =
        inner === undefined ? -1 : (f.type as avro.types.UnwrappedUnionType).types.findIndex((b) => b.typeName === 'null')
      let av = c.av
      if (prefix === '' && f.name === capture) {
        // The captured string is read as a string (it is returned), then written.
        const read = c.dec as (r: Reader) => string
        av = (r, w) => {
          const value = read(r)
          toAvroState.captured = value
          w.avroString(value)
        }
      }
      return { name: f.name, nullable: inner !== undefined, enc: c.enc, dec: c.dec, tr: c.tr, av, nullBranch }
    })
    const bitmapBytes = Math.ceil(parts.filter((p) => p.nullable).length / 8)
    const byName = new Map(parts.map((p) => [p.name, p]))
    const avroOrder = avroFields.map((f) => byName.get(f.name) ?? f.name)
    const hasCapture = prefix === '' && capture !== undefined
    // avroOrder for toAvro as flat arrays: an indexed loop over them, no type test per field.
    // The union branches as Avro writes them (a zig-zag long, one byte): when present, when null.
    const avCount = avroOrder.length
    const avFns: ToAvro[] = avroOrder.map((p) => (typeof p === 'string' ? () => {} : p.av))
    const avAsideNames: (string | undefined)[] = avroOrder.map((p) => (typeof p === 'string' ? p : undefined))
    const avKinds = Uint8Array.from(avroOrder, (p) => (typeof p === 'string' ? AV_ASIDE : p.nullable ? AV_NULLABLE : AV_PLAIN))
    const avPresentByte = Uint8Array.from(avroOrder, (p) => (typeof p === 'string' || !p.nullable ? 0 : 2 * (1 - p.nullBranch)))
    const avNullByte = Uint8Array.from(avroOrder, (p) => (typeof p === 'string' || !p.nullable ? 0 : 2 * p.nullBranch))
    return {
      av: (r, w) => {
        const bitmapAt = r.pos
        r.pos += bitmapBytes
        if (hasCapture) toAvroState.captured = null
        let bit = 0
        for (let i = 0; i < avCount; i++) {
          const kind = avKinds[i]
          if (kind === AV_NULLABLE) {
            const present = ((r.buf[bitmapAt + (bit >> 3)] as number) & (1 << (bit & 7))) !== 0
            bit++
            // The union branch, then the value.
            if (present) {
              w.byte(avPresentByte[i] as number)
              ;(avFns[i] as ToAvro)(r, w)
            } else w.byte(avNullByte[i] as number)
          } else if (kind === AV_PLAIN) (avFns[i] as ToAvro)(r, w)
          else avAside!(avAsideNames[i] as string, w)
        }
      },
      tr: (a, w) => {
        w.ensure(bitmapBytes)
        const bitmapAt = w.pos
        // A loop: Buffer.fill costs more than the few bytes it would clear.
        for (let i = 0; i < bitmapBytes; i++) w.buf[bitmapAt + i] = 0
        w.pos += bitmapBytes
        let bit = 0
        for (const p of avroOrder) {
          if (typeof p === 'string') aside!(p, a)
          else if (p.nullable) {
            const branch = a.long()
            if (branch !== p.nullBranch) {
              if (branch !== 1 - p.nullBranch) throw new RangeError(`${p.name}: union branch ${branch} does not exist`)
              w.buf[bitmapAt + (bit >> 3)] = (w.buf[bitmapAt + (bit >> 3)] as number) | (1 << (bit & 7))
              p.tr(a, w)
            }
            bit++
          } else {
            p.tr(a, w)
          }
        }
      },
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

  function compile(t: avro.Type, path: string): Compiled {
    switch (t.typeName) {
      case 'null':
        return { enc: () => {}, dec: () => null, tr: () => {}, av: () => {} }
      case 'boolean':
        return {
          enc: (w, v) => w.byte(v ? 1 : 0),
          dec: (r) => r.byte() === 1,
          tr: (a, w) => w.byte(a.byte() === 0 ? 0 : 1),
          av: (r, w) => w.byte(r.byte() === 1 ? 1 : 0),
        }
      case 'int':
        return {
          // Avro's zig-zag varint is the compact form too.
          tr: (a, w) => w.varint(a.varint()),
          av: (r, w) => w.varint(r.varint()),
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
        return {
          enc: (w, v) => w.float64(v as number),
          dec: (r) => r.float64(),
          tr: (a, w) => w.float64(a.long()),
          av: (r, w) => w.avroLong(r.float64()),
        }
      case 'float':
        return {
          enc: (w, v) => w.float64(v as number),
          dec: (r) => r.float64(),
          tr: (a, w) => w.float64(a.float()),
          av: (r, w) => w.float32(r.float64()),
        }
      case 'double':
        return {
          enc: (w, v) => w.decimalOrFloat64(v as number),
          dec: (r) => r.decimalOrFloat64(),
          tr: (a, w) => w.decimalOrFloat64(a.double()),
          av: (r, w) => w.float64(r.decimalOrFloat64()),
        }
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
          av: (r, w) => w.varint(2 * r.varint()),
          tr: (a, w) => {
            const i = a.long()
            if (i < 0 || i >= symbols.length) throw new RangeError(`${path}: enum index ${i} out of range`)
            w.varint(i)
          },
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
          // Avro: one block of n items (when there are any), then the empty block.
          av: (r, w) => {
            const n = r.varint()
            if (n > 0) {
              w.varint(2 * n)
              for (let i = 0; i < n; i++) item.av(r, w)
            }
            w.byte(0)
          },
          tr: (a, w) => {
            const countAt = w.pos
            let total = 0
            for (let n = blockCount(a); n > 0; n = blockCount(a)) {
              for (let i = 0; i < n; i++) item.tr(a, w)
              total += n
            }
            w.insertVarint(countAt, total)
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
          av: (r, w) => {
            const n = r.varint()
            if (n > 0) {
              w.varint(2 * n)
              for (let i = 0; i < n; i++) {
                key.av(r, w)
                value.av(r, w)
              }
            }
            w.byte(0)
          },
          tr: (a, w) => {
            const countAt = w.pos
            let total = 0
            for (let n = blockCount(a); n > 0; n = blockCount(a)) {
              for (let i = 0; i < n; i++) {
                key.tr(a, w)
                value.tr(a, w)
              }
              total += n
            }
            w.insertVarint(countAt, total)
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
    type,
    transcode(writer, avroBytes, offset) {
      cursor.reset(avroBytes, offset)
      last.lead = 0
      const start = writer.pos
      if (leading !== undefined) {
        // Its value comes wherever the field is in the Avro record; its place is reserved first.
        writer.ensure(8)
        writer.pos += 8
      }
      body.tr(cursor, writer)
      if (cursor.pos !== avroBytes.length)
        throw new RangeError(`Avro value has ${avroBytes.length - cursor.pos} bytes after its end`)
      if (leading !== undefined) writer.buf.writeDoubleLE(last.lead, start)
      return last.lead
    },
    toAvro(writer, buf, offset, key) {
      reader.reset(buf, offset)
      toAvroState.key = key
      toAvroState.lead = leading === undefined ? 0 : reader.float64()
      body.av(reader, writer)
    },
    get captured() {
      return toAvroState.captured
    },
    get keyStart() {
      return last.keyStart
    },
    get keyLength() {
      return last.keyLength
    },
  }
}

/** Items in the next block of an Avro array or map (0: the end); a negative count is followed by the block's size. */
function blockCount(a: AvroCursor): number {
  const n = a.long()
  if (n >= 0) return n
  a.long()
  return -n
}
