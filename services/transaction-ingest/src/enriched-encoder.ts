import type { TopicCodec } from '@tep/kafka'
import type { EnrichedTransaction } from '@tep/schemas'
import avro from 'avsc'

const HEADER_BYTES = 5

/**
 * Encodes enriched transactions with the raw event's own Avro bytes spliced
 * in. An EnrichedTransaction holds the raw event whole (its `raw` field), and
 * an Avro record is its fields' encodings one after the other, so when the raw
 * value was written with exactly the schema of that field its body is what
 * encoding the decoded raw event again would write: it is copied instead
 * (issue 21: re-encoding it was ~0.85 µs of the ingest's CPU per event). The
 * fields before and after `raw` are encoded by two record types made of the
 * enriched schema's own field types. A raw value of another writer schema (an
 * evolved producer), an unknown one (until its schema is looked up), or a
 * value that does not encode takes the codec's whole encode, so errors are the
 * codec's.
 */
export class EnrichedEncoder {
  readonly #codec: TopicCodec<EnrichedTransaction>
  readonly #schemaId: number
  readonly #writerType: (schemaId: number) => Promise<avro.Type>
  readonly #rawType: avro.Type
  readonly #head: avro.Type
  readonly #tail: avro.Type
  /** Raw writer schema id → whether its bytes are the `raw` field's encoding. */
  readonly #spliceable = new Map<number, boolean>()
  readonly #learning = new Set<number>()
  #scratch = Buffer.allocUnsafe(16 * 1024)

  /** `schemaId`: the id the codec registered (its `register()` result). */
  constructor(codec: TopicCodec<EnrichedTransaction>, schemaId: number, writerType: (schemaId: number) => Promise<avro.Type>) {
    this.#codec = codec
    this.#schemaId = schemaId
    this.#writerType = writerType
    const fields = (codec.schema.type as avro.types.RecordType).fields
    const at = fields.findIndex((f) => f.name === 'raw')
    if (at < 0) throw new TypeError('EnrichedTransaction has no raw field')
    this.#rawType = fields[at]!.type
    // Field types are the schema's own Type objects: the same encoders, named types not redefined.
    const part = (name: string, from: readonly avro.types.Field[]) =>
      avro.Type.forSchema({ type: 'record', name, fields: from.map((f) => ({ name: f.name, type: f.type as unknown as avro.Schema })) } as avro.Schema)
    this.#head = part('EnrichedHead', fields.slice(0, at))
    this.#tail = part('EnrichedTail', fields.slice(at + 1))
  }

  /**
   * The Confluent-framed encoding of `enriched`, whose `raw` is the decoded
   * `rawValue` (the consumed record's value, framed) and was not changed since.
   */
  encode(enriched: EnrichedTransaction, rawValue: Buffer | null): Buffer {
    if (rawValue === null || rawValue.length < HEADER_BYTES || rawValue[0] !== 0) return this.#codec.encodeSync(enriched)
    const writerId = rawValue.readInt32BE(1)
    const spliceable = this.#spliceable.get(writerId)
    if (spliceable !== true) {
      if (spliceable === undefined) this.#learn(writerId)
      return this.#codec.encodeSync(enriched)
    }
    try {
      return this.#splice(enriched, rawValue)
    } catch {
      // The codec's encode names the field that does not match the schema.
      return this.#codec.encodeSync(enriched)
    }
  }

  #splice(enriched: EnrichedTransaction, rawValue: Buffer): Buffer {
    const bodyLength = rawValue.length - HEADER_BYTES
    for (;;) {
      const buf = this.#scratch
      buf[0] = 0
      buf.writeInt32BE(this.#schemaId, 1)
      let end = this.#head.encode(enriched, buf, HEADER_BYTES)
      if (end >= 0 && end + bodyLength <= buf.length) {
        rawValue.copy(buf, end, HEADER_BYTES)
        end = this.#tail.encode(enriched, buf, end + bodyLength)
        if (end >= 0) return Buffer.from(buf.subarray(0, end))
      }
      // Too small for this value (a negative end is the shortfall): grow and write again.
      this.#scratch = Buffer.allocUnsafe(buf.length * 2 + bodyLength)
    }
  }

  /** Looks up a raw writer schema once; until then its records take the whole encode. */
  #learn(writerId: number): void {
    if (this.#learning.has(writerId)) return
    this.#learning.add(writerId)
    this.#writerType(writerId).then(
      (writer) => this.#spliceable.set(writerId, writer.equals(this.#rawType)),
      () => {
        // Unknown to the registry, or the registry down: asked again by a later record.
      },
    ).finally(() => this.#learning.delete(writerId))
  }
}
