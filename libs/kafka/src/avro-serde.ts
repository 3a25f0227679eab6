import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry'
import {
  avroSchemas,
  valueSubject,
  type AvroSchemaJson,
  type EventTypes,
  type LoadedSchema,
  type SchemaName,
} from '@tep/schemas'
import type avro from 'avsc'
import {
  KafkaLibError,
  SchemaRegistryUnavailableError,
  UNDECODABLE_CODES,
  UndecodableRecordError,
} from './errors.ts'
import { SILENT_LOGGER, type KafkaLogger } from './logger.ts'
import { isRegistryUnavailable, registerSubjectSchema, registryErrorStatus } from './schema-registry.ts'

/** Confluent wire format: magic byte 0, 4-byte big-endian schema id, Avro binary. */
export const CONFLUENT_MAGIC_BYTE = 0
const HEADER_BYTES = 5

/** A value that does not match the schema it is encoded with: a bug in the producer, never retriable. */
export class InvalidEventError extends KafkaLibError {
  constructor(message: string, details: Record<string, unknown>) {
    super(message, { code: 'EVENT_INVALID', retriable: false, details })
  }
}

/** Frames an Avro body in the Confluent wire format. */
export function confluentFrame(schemaId: number, body: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES)
  header.writeUInt8(CONFLUENT_MAGIC_BYTE, 0)
  header.writeInt32BE(schemaId, 1)
  return Buffer.concat([header, body])
}

/** Splits a Confluent-framed value, or throws UndecodableRecordError with a specific code. */
export function confluentUnframe(value: Buffer | null): { schemaId: number; body: Buffer } {
  if (value === null || value.length < HEADER_BYTES) {
    throw new UndecodableRecordError(
      `value is ${value === null ? 'null' : `${value.length} bytes`}; a Confluent Avro value has at least ${HEADER_BYTES} header bytes`,
      UNDECODABLE_CODES.emptyValue,
    )
  }
  if (value[0] !== CONFLUENT_MAGIC_BYTE) {
    throw new UndecodableRecordError(
      `value starts with byte ${value[0]}, not the Confluent magic byte 0 (not produced by a schema-registry serializer)`,
      UNDECODABLE_CODES.badMagicByte,
    )
  }
  return { schemaId: value.readInt32BE(1), body: value.subarray(HEADER_BYTES) }
}

/** Encodes and decodes the values of one topic with one event schema. */
export interface TopicCodec<T> {
  readonly topic: string
  readonly subject: string
  readonly schema: LoadedSchema
  /** Registers the schema (once; cached) and returns its id. Retriable failure: SchemaRegistryUnavailableError. */
  register(): Promise<number>
  /** Encodes `value` (registering first if needed). Throws InvalidEventError when it breaks the schema. */
  encode(value: T): Promise<Buffer>
  /** Synchronous encode once `register()` has resolved. */
  encodeSync(value: T): Buffer
  /**
   * Decodes any Confluent Avro value written with a schema this topic's schema
   * can read (BACKWARD), projected onto the current schema. Throws
   * UndecodableRecordError (non-retriable, a DLQ reason) or
   * SchemaRegistryUnavailableError (retriable).
   */
  decode(value: Buffer | null): Promise<T>
  /**
   * decode(), and the value's Avro body when it was written with exactly this
   * topic's schema (undefined otherwise). Such a body can be copied as it is
   * into an event that embeds this schema, instead of being encoded again
   * (the ingest's EnrichedTransaction.raw).
   */
  decodeWithBody(value: Buffer | null): Promise<{ value: T; body: Buffer | undefined }>
  /**
   * decodeWithBody without a promise once the writer's schema was fetched
   * (undefined before: then use decodeWithBody). Throws what it would reject with.
   */
  decodeWithBodyIfReady(value: Buffer | null): { value: T; body: Buffer | undefined } | undefined
}

export interface AvroSerdeOptions {
  registry: SchemaRegistry
  logger?: KafkaLogger
}

/**
 * Avro serialisation through a Confluent-compatible schema registry with
 * TopicNameStrategy subjects (`<topic>-value`) and BACKWARD compatibility.
 * Schema ids and parsed writer schemas are cached for the life of the serde.
 */
export class AvroSerde {
  private readonly registry: SchemaRegistry
  private readonly logger: KafkaLogger
  private readonly registered = new Map<string, Promise<number>>()
  private readonly writers = new Map<number, Promise<avro.Type>>()
  /** The writer schemas fetched so far (what `writers` resolved to), for decodes without a promise. */
  private readonly writersKnown = new Map<number, avro.Type>()
  private readonly resolvers = new WeakMap<avro.Type, Map<number, avro.Type | 'same'>>()
  private readonly codecs = new Map<string, TopicCodec<unknown>>()

  constructor(options: AvroSerdeOptions) {
    this.registry = options.registry
    this.logger = options.logger ?? SILENT_LOGGER
  }

  /** The codec of `topic` for event `schemaName` (same object for the same pair). */
  topic<N extends SchemaName>(
    topic: string,
    schemaName: N,
    options: { validate?: (value: EventTypes[N]) => string[] } = {},
  ): TopicCodec<EventTypes[N]> {
    const cacheKey = `${topic}\u0000${schemaName}`
    const cached = this.codecs.get(cacheKey)
    if (cached !== undefined && options.validate === undefined) return cached as TopicCodec<EventTypes[N]>
    const schema = avroSchemas[schemaName]
    const subject = valueSubject(topic)
    let schemaId: number | undefined
    const checked = (decoded: EventTypes[N]): EventTypes[N] => {
      const problems = options.validate?.(decoded) ?? []
      if (problems.length > 0) {
        throw new UndecodableRecordError(
          `${schemaName} on ${topic} breaks its contract: ${problems.join('; ')}`,
          UNDECODABLE_CODES.schemaInvalid,
          {
            details: { problems },
          },
        )
      }
      return decoded
    }
    const codec: TopicCodec<EventTypes[N]> = {
      topic,
      subject,
      schema,
      register: async () => {
        schemaId = await this.registerSchema(subject, schema.schema)
        return schemaId
      },
      encodeSync: (value) => {
        if (schemaId === undefined) {
          throw new KafkaLibError(`encodeSync on ${topic} before register() resolved`, {
            code: 'SERDE_NOT_READY',
          })
        }
        return encodeFramed(schema, schemaId, value)
      },
      encode: async (value) => encodeFramed(schema, await codec.register(), value),
      decode: async (value) => checked((await this.decodeFrame(schema.type, value)).decoded as EventTypes[N]),
      decodeWithBody: async (value) => {
        const { decoded, body } = await this.decodeFrame(schema.type, value)
        return { value: checked(decoded as EventTypes[N]), body }
      },
      decodeWithBodyIfReady: (value) => {
        const frame = this.decodeFrameIfReady(schema.type, value)
        return frame === undefined ? undefined : { value: checked(frame.decoded as EventTypes[N]), body: frame.body }
      },
    }
    if (options.validate === undefined) this.codecs.set(cacheKey, codec as TopicCodec<unknown>)
    return codec
  }

  /** Registers `schema` under `subject` (cached per subject and schema text). */
  registerSchema(subject: string, schema: AvroSchemaJson): Promise<number> {
    const key = `${subject}\u0000${JSON.stringify(schema)}`
    let pending = this.registered.get(key)
    if (pending === undefined) {
      pending = registerSubjectSchema(this.registry, subject, schema, { logger: this.logger })
      this.registered.set(key, pending)
      // A failed registration is not cached: the next call tries again.
      pending.catch(() => this.registered.delete(key))
    }
    return pending
  }

  /** Decodes a Confluent Avro value into the shape of `reader` (schema resolution from the writer's schema). */
  async decodeWith(reader: avro.Type, value: Buffer | null): Promise<unknown> {
    return (await this.decodeFrame(reader, value)).decoded
  }

  /** decodeWith, and the Avro body when the writer's schema is the reader's (else undefined). */
  private async decodeFrame(reader: avro.Type, value: Buffer | null): Promise<{ decoded: unknown; body: Buffer | undefined }> {
    const { schemaId, body } = confluentUnframe(value)
    return this.decodeBody(reader, schemaId, body, await this.writerType(schemaId))
  }

  /** decodeFrame without a promise when the writer's schema is known already; undefined when it is not. */
  private decodeFrameIfReady(reader: avro.Type, value: Buffer | null): { decoded: unknown; body: Buffer | undefined } | undefined {
    const { schemaId, body } = confluentUnframe(value)
    const writer = this.writersKnown.get(schemaId)
    return writer === undefined ? undefined : this.decodeBody(reader, schemaId, body, writer)
  }

  private decodeBody(reader: avro.Type, schemaId: number, body: Buffer, writer: avro.Type): { decoded: unknown; body: Buffer | undefined } {
    let byWriter = this.resolvers.get(reader)
    if (byWriter === undefined) {
      byWriter = new Map()
      this.resolvers.set(reader, byWriter)
    }
    let resolver = byWriter.get(schemaId)
    if (resolver === undefined) {
      try {
        resolver = writer.equals(reader) ? 'same' : (reader.createResolver(writer) as unknown as avro.Type)
      } catch (err) {
        throw new UndecodableRecordError(
          `value written with schema id ${schemaId} cannot be read as ${reader.name ?? 'the expected schema'}: ${(err as Error).message}`,
          UNDECODABLE_CODES.incompatibleSchema,
          { cause: err, details: { schemaId } },
        )
      }
      byWriter.set(schemaId, resolver)
    }
    try {
      return resolver === 'same'
        ? { decoded: reader.fromBuffer(body), body }
        : { decoded: reader.fromBuffer(body, resolver as unknown as avro.Resolver), body: undefined }
    } catch (err) {
      throw new UndecodableRecordError(
        `value with schema id ${schemaId} does not decode: ${(err as Error).message}`,
        UNDECODABLE_CODES.corruptPayload,
        { cause: err, details: { schemaId } },
      )
    }
  }

  /**
   * The writer schema of `schemaId` when it was fetched already (else undefined):
   * the DLQ writer masks a value field by field with it, without waiting.
   */
  knownWriterType(schemaId: number): avro.Type | undefined {
    return this.writersKnown.get(schemaId)
  }

  /** The writer schema of `schemaId` from the registry (cached; a failed fetch is not). */
  writerType(schemaId: number): Promise<avro.Type> {
    let pending = this.writers.get(schemaId)
    if (pending === undefined) {
      pending = this.fetchWriter(schemaId)
      this.writers.set(schemaId, pending)
      pending.then(
        (writer) => this.writersKnown.set(schemaId, writer),
        () => this.writers.delete(schemaId),
      )
    }
    return pending
  }

  private async fetchWriter(schemaId: number): Promise<avro.Type> {
    try {
      return (await this.registry.getSchema(schemaId)) as unknown as avro.Type
    } catch (err) {
      if (registryErrorStatus(err) === 404) {
        throw new UndecodableRecordError(
          `schema id ${schemaId} is unknown to the schema registry`,
          UNDECODABLE_CODES.unknownSchemaId,
          {
            cause: err,
            details: { schemaId },
          },
        )
      }
      if (isRegistryUnavailable(err)) {
        throw new SchemaRegistryUnavailableError(
          `schema registry unavailable while fetching schema id ${schemaId}: ${(err as Error).message}`,
          err,
          {
            schemaId,
          },
        )
      }
      // Anything else (an unexpected answer) is treated as a registry problem, not the record's fault.
      this.logger.warn({ schemaId, err: (err as Error).message }, 'unexpected schema registry answer')
      throw new SchemaRegistryUnavailableError(
        `schema registry gave an unexpected answer for schema id ${schemaId}: ${(err as Error).message}`,
        err,
        {
          schemaId,
        },
      )
    }
  }
}

/**
 * Where values are encoded before they are copied out: avsc's toBuffer writes
 * into a fixed 1 KB buffer and writes a second time when a value is larger (an
 * enriched transaction often is), and framing then copied the body once more.
 * Grows to the largest value seen.
 */
let scratch = Buffer.allocUnsafe(64 * 1024)

/**
 * The Confluent frame (magic byte, schema id) and the Avro body in one buffer,
 * written once and copied once. avsc checks every value as it writes it (a
 * wrong type, a missing field, an unknown enum symbol or union branch throws),
 * so the separate isValid pass that names the bad fields runs only when the
 * write fails: it cost about a tenth of the ingest's CPU on every record.
 */
function encodeFramed(schema: LoadedSchema, schemaId: number, value: unknown): Buffer {
  for (;;) {
    let end: number
    try {
      scratch.writeUInt8(CONFLUENT_MAGIC_BYTE, 0)
      scratch.writeInt32BE(schemaId, 1)
      end = schema.type.encode(value, scratch, HEADER_BYTES)
    } catch {
      // avsc's own message quotes the value (personal data): not kept as the cause.
      throw invalidEvent(schema, value)
    }
    if (end >= 0) return Buffer.from(scratch.subarray(0, end))
    // A negative answer is the number of bytes missing.
    scratch = Buffer.allocUnsafe(Math.max(scratch.length * 2, scratch.length - end))
  }
}

function invalidEvent(schema: LoadedSchema, value: unknown): InvalidEventError {
  return invalidEventAt(schema.name, [{ type: schema.type, value, path: [] }])
}

/**
 * The InvalidEventError of an event of `schemaName` whose parts break their
 * types: each check is a type, the value written with it and the path of that
 * value in the event. Field paths only: values may hold personal data.
 */
export function invalidEventAt(
  schemaName: string,
  checks: ReadonlyArray<{ type: avro.Type; value: unknown; path: readonly string[] }>,
): InvalidEventError {
  const paths: string[] = []
  for (const check of checks)
    check.type.isValid(check.value, { errorHook: (path) => paths.push([...check.path, ...path].join('.') || '(root)') })
  return new InvalidEventError(
    `${schemaName} value does not match its schema at: ${paths.length > 0 ? paths.join(', ') : '(root)'}`,
    { schema: schemaName, paths },
  )
}
