import avro from 'avsc'
import type { LoadedSchema } from '@tep/schemas'
import { CONFLUENT_MAGIC_BYTE, invalidEventAt, type InvalidEventError, type TopicCodec } from './avro-serde.ts'

/** A field of the outer record whose value may be given as Avro bytes of `schema`. */
export interface SpliceField {
  field: string
  /** The embedded event's schema: the field's type, or a branch of the field's union (["null", X]). */
  schema: LoadedSchema
}

interface Splice {
  field: string
  /** The field's own type: what writes the value when no bytes are given. */
  type: avro.Type
  /** The union branch index written before the bytes; undefined when the field's type is the schema itself. */
  branch: number | undefined
}

/** A record type of some of `record`'s fields, in order, with their defaults (avsc writes a default for a field left undefined). */
function partOf(name: string, fields: readonly avro.types.Field[]): avro.Type | undefined {
  if (fields.length === 0) return undefined
  return avro.Type.forSchema({
    type: 'record',
    name,
    fields: fields.map((f) => ({ name: f.name, type: f.type as unknown as avro.Schema, default: f.defaultValue() as unknown })),
  } as avro.Schema)
}

/**
 * Encodes events of a record schema some of whose fields embed other event
 * schemas, with those fields' Avro bytes copied as they are instead of
 * encoded again. The ingest's EnrichedTransaction holds the RawTransaction it
 * was made from (`raw`, whose bytes arrived in the raw record) and the shop
 * and merchant (whose bytes the local table writes without making objects).
 * An Avro record is its fields' encodings one after the other, and a union
 * value is its branch index and then the value, so the frame is: the fields
 * before (written), the embedded bytes (copied), the fields after (written),
 * and so on: the bytes the codec's encodeSync writes for the whole object.
 *
 * A field given as bytes is not read from the value (it may be null there);
 * bytes must be exactly the embedded value's encoding by the embedded schema
 * (TopicCodec.decodeWithBody gives a body only then; CompactCodec.toAvro
 * writes one). A field given no bytes is written from the value.
 */
export class SplicingEncoder<T extends object> {
  readonly #codec: TopicCodec<T>
  readonly #schemaId: number
  readonly #splices: Splice[]
  /** Parts between the splices: parts[i] before splices[i], the last after the last splice. */
  readonly #parts: (avro.Type | undefined)[]
  #scratch = Buffer.allocUnsafe(16 * 1024)

  /**
   * @param codec the outer event's codec, registered: `schemaId` is what its register() gave
   * @param splices the fields that may be given as bytes
   */
  constructor(codec: TopicCodec<T>, schemaId: number, splices: readonly SpliceField[]) {
    const record = codec.schema.type as avro.types.RecordType
    const at = splices
      .map((s) => {
        const index = record.fields.findIndex((f) => f.name === s.field)
        if (index < 0) throw new Error(`${codec.schema.name} has no field ${s.field}`)
        return { index, splice: spliceOf(record.fields[index]!, s) }
      })
      .sort((a, b) => a.index - b.index)
    this.#codec = codec
    this.#schemaId = schemaId
    this.#splices = at.map((a) => a.splice)
    this.#parts = []
    let from = 0
    for (const [i, a] of at.entries()) {
      this.#parts.push(partOf(`${codec.schema.name}Part${i}`, record.fields.slice(from, a.index)))
      from = a.index + 1
    }
    this.#parts.push(partOf(`${codec.schema.name}Part${at.length}`, record.fields.slice(from)))
  }

  /**
   * The Confluent-framed event. `bodies[i]` is the Avro encoding of the i-th
   * splice field's value (in the order they were given), or undefined to write
   * that field from `value`.
   */
  encode(value: T, bodies: readonly (Buffer | undefined)[]): Buffer {
    for (;;) {
      const scratch = this.#scratch
      let end: number
      try {
        end = this.#write(scratch, value, bodies)
      } catch {
        throw this.#invalid(value, bodies)
      }
      if (end >= 0) return Buffer.from(scratch.subarray(0, end))
      this.#scratch = Buffer.allocUnsafe(Math.max(scratch.length * 2, scratch.length - end))
    }
  }

  /** The end of the frame in `buf`, or a negative number once it does not fit (avsc's convention). */
  #write(buf: Buffer, value: T, bodies: readonly (Buffer | undefined)[]): number {
    buf[0] = CONFLUENT_MAGIC_BYTE
    buf.writeInt32BE(this.#schemaId, 1)
    let pos = 5
    const splices = this.#splices
    for (let i = 0; i <= splices.length; i++) {
      const part = this.#parts[i]
      if (part !== undefined) pos = part.encode(value, buf, pos)
      if (pos < 0 || i === splices.length) return pos
      const splice = splices[i]!
      const body = bodies[i]
      if (body === undefined) {
        pos = splice.type.encode((value as Record<string, unknown>)[splice.field], buf, pos)
        if (pos < 0) return pos
        continue
      }
      const needed = pos + (splice.branch === undefined ? 0 : 1) + body.length
      if (needed > buf.length) return buf.length - needed
      // A branch index below 64 is one zig-zag varint byte (checked in spliceOf).
      if (splice.branch !== undefined) buf[pos++] = splice.branch * 2
      pos += body.copy(buf, pos)
    }
    return pos
  }

  /** Why the event could not be written: the paths of the fields written from the value that break the schema. */
  #invalid(value: T, bodies: readonly (Buffer | undefined)[]): InvalidEventError {
    const checks: { type: avro.Type; value: unknown; path: string[] }[] = []
    for (const part of this.#parts) if (part !== undefined) checks.push({ type: part, value, path: [] })
    for (const [i, s] of this.#splices.entries())
      if (bodies[i] === undefined) checks.push({ type: s.type, value: (value as Record<string, unknown>)[s.field], path: [s.field] })
    return invalidEventAt(this.#codec.schema.name, checks)
  }
}

function spliceOf(field: avro.types.Field, s: SpliceField): Splice {
  const embedded = s.schema.type
  if (field.type.equals(embedded)) return { field: s.field, type: field.type, branch: undefined }
  const branches = (field.type as avro.types.UnwrappedUnionType).types
  const branch = Array.isArray(branches) ? branches.findIndex((b) => b.equals(embedded)) : -1
  if (branch < 0 || branch >= 64)
    throw new Error(`field ${s.field} cannot embed ${s.schema.name}: its type is neither ${s.schema.name} nor a union with it`)
  return { field: s.field, type: field.type, branch }
}
