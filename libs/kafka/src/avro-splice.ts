import avro from 'avsc'
import { CONFLUENT_MAGIC_BYTE, type TopicCodec } from './avro-serde.ts'

/** A record type of some of `record`'s fields, in order, with their defaults (avsc writes a default for a field left undefined). */
function partOf(record: avro.types.RecordType, name: string, fields: avro.types.Field[]): avro.Type | undefined {
  if (fields.length === 0) return undefined
  return avro.Type.forSchema({
    type: 'record',
    name,
    fields: fields.map((f) => ({ name: f.name, type: f.type as unknown as avro.Schema, default: f.defaultValue() as unknown })),
  } as avro.Schema)
}

/**
 * Encodes events of a record schema one of whose fields embeds another event
 * schema, with that field's Avro bytes copied as they are instead of encoded
 * again: the ingest's EnrichedTransaction holds the RawTransaction it was made
 * from (`raw`), whose bytes arrived in the raw record. An Avro record is its
 * fields' encodings one after the other, so the frame is the fields before
 * (written), the embedded body (copied), the fields after (written): the same
 * bytes the codec's encodeSync writes, for about a third less work per event.
 *
 * The body must be what the embedded value was decoded from with exactly the
 * embedded schema (TopicCodec.decodeWithBody gives it only then). Without one,
 * or when the field's type is not that schema, or when writing fails (the
 * value breaks the schema), it is the codec's encodeSync, which says why.
 */
export class SplicingEncoder<T extends object> {
  readonly #codec: TopicCodec<T>
  readonly #schemaId: number
  readonly #head: avro.Type | undefined
  readonly #tail: avro.Type | undefined
  /** False when the field's type is not the embedded codec's schema: never splice. */
  readonly splices: boolean
  #scratch = Buffer.allocUnsafe(16 * 1024)

  /**
   * @param codec the outer event's codec, registered: `schemaId` is what its register() gave
   * @param field the field that embeds `embedded`'s schema
   */
  constructor(codec: TopicCodec<T>, schemaId: number, field: string, embedded: TopicCodec<unknown>) {
    const record = codec.schema.type as avro.types.RecordType
    const at = record.fields.findIndex((f) => f.name === field)
    if (at < 0) throw new Error(`${codec.schema.name} has no field ${field}`)
    this.#codec = codec
    this.#schemaId = schemaId
    this.splices = record.fields[at]!.type.equals(embedded.schema.type)
    this.#head = partOf(record, `${codec.schema.name}SpliceHead`, record.fields.slice(0, at))
    this.#tail = partOf(record, `${codec.schema.name}SpliceTail`, record.fields.slice(at + 1))
  }

  /** The Confluent-framed event; `body` is the Avro body `value[field]` was decoded from, or undefined. */
  encode(value: T, body: Buffer | undefined): Buffer {
    if (body === undefined || !this.splices) return this.#codec.encodeSync(value)
    for (;;) {
      const scratch = this.#scratch
      let end: number
      try {
        end = this.#write(scratch, value, body)
      } catch {
        return this.#codec.encodeSync(value) // throws InvalidEventError naming the bad fields
      }
      if (end >= 0) return Buffer.from(scratch.subarray(0, end))
      this.#scratch = Buffer.allocUnsafe(Math.max(scratch.length * 2, scratch.length - end))
    }
  }

  /** The end of the frame in `buf`, or minus the bytes missing (avsc's convention). */
  #write(buf: Buffer, value: T, body: Buffer): number {
    buf[0] = CONFLUENT_MAGIC_BYTE
    buf.writeInt32BE(this.#schemaId, 1)
    let pos = this.#head === undefined ? 5 : this.#head.encode(value, buf, 5)
    if (pos < 0) return pos - body.length - 1
    if (pos + body.length > buf.length) return buf.length - (pos + body.length) - 1
    pos += body.copy(buf, pos)
    if (this.#tail === undefined) return pos
    return this.#tail.encode(value, buf, pos)
  }
}
