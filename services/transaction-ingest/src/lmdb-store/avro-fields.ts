/**
 * Finds top-level fields of an Avro record in its binary encoding without
 * decoding it: the LMDB store keeps the record's Avro bytes as they came from
 * the topic and needs only its uid, fetchedAt and (shops) merchantUid.
 * Skipping is compiled once per schema from its JSON form (Avro 1.11 binary
 * encoding: zig-zag varints, length-prefixed strings/bytes, blocked arrays and maps).
 */

type Skip = (buf: Buffer, pos: number) => number
type JsonSchema = string | JsonSchema[] | { type: string | JsonSchema; [key: string]: unknown }

/** A zig-zag varint long at `pos`: [value, next position]. Exact up to 2^53. */
export function readLong(buf: Buffer, pos: number): [number, number] {
  let n = 0
  let factor = 1
  let b: number
  do {
    b = buf[pos++]!
    if (b === undefined) throw new RangeError('truncated Avro varint')
    n += (b & 0x7f) * factor
    factor *= 128
  } while (b & 0x80)
  return [n % 2 === 0 ? n / 2 : -(n + 1) / 2, pos]
}

function skipVarint(buf: Buffer, pos: number): number {
  while (buf[pos++]! & 0x80);
  return pos
}

function skipBlocks(buf: Buffer, pos: number, item: Skip): number {
  for (;;) {
    let count: number
    ;[count, pos] = readLong(buf, pos)
    if (count === 0) return pos
    if (count < 0) {
      // A negative count is followed by the block's size in bytes: skipped whole.
      let size: number
      ;[size, pos] = readLong(buf, pos)
      pos += size
    } else for (let i = 0; i < count; i++) pos = item(buf, pos)
  }
}

function compile(schema: JsonSchema, named: Map<string, Skip>, namespace = ''): Skip {
  if (Array.isArray(schema)) {
    const branches = schema.map((s) => compile(s, named, namespace))
    return (buf, pos) => {
      const [index, next] = readLong(buf, pos)
      const branch = branches[index]
      if (branch === undefined) throw new RangeError(`union branch ${index} out of range`)
      return branch(buf, next)
    }
  }
  if (typeof schema === 'string') {
    switch (schema) {
      case 'null':
        return (_buf, pos) => pos
      case 'boolean':
        return (_buf, pos) => pos + 1
      case 'int':
      case 'long':
      case 'enum':
        return skipVarint
      case 'float':
        return (_buf, pos) => pos + 4
      case 'double':
        return (_buf, pos) => pos + 8
      case 'string':
      case 'bytes':
        return (buf, pos) => {
          const [length, next] = readLong(buf, pos)
          return next + length
        }
      default: {
        const full = schema.includes('.') || namespace === '' ? schema : `${namespace}.${schema}`
        const ref = named.get(full) ?? named.get(schema)
        if (ref === undefined) throw new Error(`unknown Avro type ${schema}`)
        return (buf, pos) => ref(buf, pos)
      }
    }
  }
  const { type } = schema
  if (typeof type !== 'string') return compile(type, named, namespace)
  const name = typeof schema['name'] === 'string' ? (schema['name'] as string) : undefined
  const ns = typeof schema['namespace'] === 'string' ? (schema['namespace'] as string) : namespace
  const fullName = name === undefined ? undefined : name.includes('.') || ns === '' ? name : `${ns}.${name}`
  switch (type) {
    case 'record':
    case 'error': {
      let fields: Skip[] = []
      const self: Skip = (buf, pos) => {
        for (const field of fields) pos = field(buf, pos)
        return pos
      }
      if (fullName !== undefined) named.set(fullName, self)
      fields = (schema['fields'] as Array<{ type: JsonSchema }>).map((f) => compile(f.type, named, ns))
      return self
    }
    case 'enum':
      if (fullName !== undefined) named.set(fullName, skipVarint)
      return skipVarint
    case 'fixed': {
      const size = schema['size'] as number
      const skip: Skip = (_buf, pos) => pos + size
      if (fullName !== undefined) named.set(fullName, skip)
      return skip
    }
    case 'array': {
      const item = compile(schema['items'] as JsonSchema, named, ns)
      return (buf, pos) => skipBlocks(buf, pos, item)
    }
    case 'map': {
      const value = compile(schema['values'] as JsonSchema, named, ns)
      const skipKey = compile('string', named, ns)
      return (buf, pos) => skipBlocks(buf, pos, (b, p) => value(b, skipKey(b, p)))
    }
    default:
      // A primitive written as {"type": "long", "logicalType": ...}.
      return compile(type, named, ns)
  }
}

/**
 * Positions of the wanted top-level fields of records of `schema` (a record
 * schema in JSON form, as avsc's `Type.schema()` gives it).
 */
export class AvroFieldLocator {
  readonly #fields: Skip[]
  readonly #wanted: number[]

  constructor(schema: JsonSchema, wanted: readonly string[]) {
    if (typeof schema !== 'object' || Array.isArray(schema) || schema.type !== 'record') throw new TypeError('a record schema is needed')
    const named = new Map<string, Skip>()
    const ns = typeof schema['namespace'] === 'string' ? (schema['namespace'] as string) : ''
    const fields = schema['fields'] as Array<{ name: string; type: JsonSchema }>
    this.#fields = fields.map((f) => compile(f.type, named, ns))
    this.#wanted = wanted.map((name) => {
      const index = fields.findIndex((f) => f.name === name)
      if (index < 0) throw new Error(`the schema has no field ${name}`)
      return index
    })
  }

  /**
   * Start offsets of the wanted fields (in the order asked) of the record at
   * `offset`; returns where the record ends. Every field is walked, so bytes
   * that are not one record of the schema throw (or end elsewhere than the buffer).
   */
  locate(buf: Buffer, offset: number, out: number[]): number {
    let pos = offset
    const wanted = this.#wanted
    for (let i = 0; i < this.#fields.length; i++) {
      for (let w = 0; w < wanted.length; w++) if (wanted[w] === i) out[w] = pos
      pos = this.#fields[i]!(buf, pos)
      if (pos > buf.length) throw new RangeError('truncated Avro record')
    }
    return pos
  }
}
