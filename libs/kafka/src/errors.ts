import { PipelineError } from '@tep/errors'

/** Root of the errors thrown by @tep/kafka. */
export class KafkaLibError extends PipelineError {}

/**
 * A record whose bytes cannot be turned into the expected value: wrong magic
 * byte, unknown schema id, bytes that do not match the writer schema, or a value
 * that breaks a rule of its schema. Retrying cannot help, so it is never retriable:
 * the pipeline sends the record to the DLQ with `code` as the reason.
 */
export class UndecodableRecordError extends KafkaLibError {
  constructor(
    message: string,
    code: UndecodableCode,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, { code, retriable: false, cause: options.cause, details: options.details })
  }
}

/** Codes of UndecodableRecordError (also the `dlq.error.code` header value). */
export const UNDECODABLE_CODES = {
  /** The value is null or shorter than the 5-byte Confluent header. */
  emptyValue: 'AVRO_EMPTY_VALUE',
  /** The first byte is not the Confluent magic byte 0. */
  badMagicByte: 'AVRO_BAD_MAGIC_BYTE',
  /** The registry does not know the schema id in the header. */
  unknownSchemaId: 'AVRO_UNKNOWN_SCHEMA_ID',
  /** The bytes do not decode with the writer schema (truncated, corrupt). */
  corruptPayload: 'AVRO_CORRUPT_PAYLOAD',
  /** The writer schema cannot be read as the expected reader schema. */
  incompatibleSchema: 'AVRO_INCOMPATIBLE_SCHEMA',
  /** Decoded, but the value breaks a rule of its contract. */
  schemaInvalid: 'SCHEMA_INVALID',
} as const
export type UndecodableCode = (typeof UNDECODABLE_CODES)[keyof typeof UNDECODABLE_CODES]

/** The schema registry could not be reached or answered 5xx: retriable, a systemic failure, never a DLQ reason. */
export class SchemaRegistryUnavailableError extends KafkaLibError {
  constructor(message: string, cause?: unknown, details?: Record<string, unknown>) {
    super(message, { code: 'SCHEMA_REGISTRY_UNAVAILABLE', retriable: true, cause, details })
  }
}

/** The registry refused a schema (incompatible with the subject's history, or invalid). Not retriable. */
export class SchemaRegistrationError extends KafkaLibError {
  constructor(message: string, cause?: unknown, details?: Record<string, unknown>) {
    super(message, { code: 'SCHEMA_REGISTRATION_REFUSED', retriable: false, cause, details })
  }
}

/** An existing topic differs from the catalog in a way that cannot be fixed automatically. */
export class TopicConfigMismatchError extends KafkaLibError {
  constructor(message: string, details: Record<string, unknown>) {
    super(message, { code: 'TOPIC_CONFIG_MISMATCH', retriable: false, details })
  }
}

/**
 * An existing topic has fewer replicas than configured, or min.insync.replicas
 * below 2 on a cluster of three or more brokers: one broker loss would stall it
 * or leave acknowledged records on a single copy.
 */
export class UnderReplicatedTopicError extends KafkaLibError {
  constructor(message: string, details: Record<string, unknown>) {
    super(message, { code: 'TOPIC_UNDER_REPLICATED', retriable: false, details })
  }
}

/** Invalid options passed to a function of this library (a programming or configuration error). */
export class KafkaConfigError extends KafkaLibError {
  constructor(message: string, details?: Record<string, unknown>) {
    super(message, { code: 'KAFKA_CONFIG_INVALID', retriable: false, details })
  }
}

/** The pipeline stopped retrying a systemic failure because it was asked to stop. */
export class PipelineStoppedError extends KafkaLibError {
  constructor(message: string) {
    super(message, { code: 'PIPELINE_STOPPED', retriable: true })
  }
}

/** Reading a topic to its end offsets took longer than allowed (a slow or unreachable broker, a group that cannot be joined). */
export class TopicScanTimeoutError extends KafkaLibError {
  constructor(message: string, details: Record<string, unknown>) {
    super(message, { code: 'TOPIC_SCAN_TIMEOUT', retriable: true, details })
  }
}

/**
 * Another producer with the same transactional id started (InitProducerId) and
 * fenced this one: it can never commit again. Stop; retrying cannot help.
 */
export class ProducerFencedError extends KafkaLibError {
  constructor(transactionalId: string, cause?: unknown) {
    super(`transactional id ${transactionalId} was taken over by a newer producer (fenced)`, {
      code: 'PRODUCER_FENCED',
      retriable: false,
      cause,
      details: { transactionalId },
    })
  }
}

/** A producer of this library was used after `close()`. */
export class ProducerClosedError extends KafkaLibError {
  constructor(what: string) {
    super(`${what} is closed`, { code: 'PRODUCER_CLOSED', retriable: false })
  }
}
