import { errorCode } from '@tep/errors'
import { maskSensitiveText } from '@tep/observability'
import type { RecordHeaders } from './pipeline-types.ts'
import { maskPans, maskRecordValue, type WriterSchemaLookup } from './pan-masking.ts'

/**
 * Names of the headers that say why a record is on the DLQ. The record's own key,
 * value and headers are kept, except that card numbers in them are masked
 * (pan-masking.ts: an Avro value field by field, anything else as bytes;
 * `dlq.masked.pans` then says how many), and card numbers and IBANs in the error
 * message and name; these are added (replacing any earlier dlq.* headers, so a
 * record that went through the DLQ twice tells the latest story).
 */
export const DLQ_HEADERS = {
  errorCode: 'dlq.error.code',
  errorMessage: 'dlq.error.message',
  errorName: 'dlq.error.name',
  sourceTopic: 'dlq.source.topic',
  sourcePartition: 'dlq.source.partition',
  sourceOffset: 'dlq.source.offset',
  sourceTimestamp: 'dlq.source.timestamp',
  consumerGroup: 'dlq.consumer.group',
  attempts: 'dlq.attempts',
  failedAt: 'dlq.failed.at',
  /** Present when card numbers were masked in the key, value or source headers: how many. */
  masked: 'dlq.masked.pans',
} as const

/** Longest error message copied into a header; longer ones are cut with a marker. */
export const DLQ_MESSAGE_MAX_CHARS = 1000

export interface DlqSource {
  topic: string
  partition: number
  offset: string
  /** Original record timestamp (epoch ms as KafkaJS gives it). */
  timestamp?: string
  key: Buffer | null
  value: Buffer | null
  headers?: RecordHeaders
}

export interface DlqFailure {
  /** Stable code; taken from the error when it is a PipelineError. */
  code?: string
  error: unknown
  attempts: number
  consumerGroup?: string
  failedAt?: Date
}

export interface DlqRecord {
  topic: string
  key: Buffer | null
  value: Buffer | null
  headers: RecordHeaders
}

export interface DlqRecordOptions {
  /**
   * The writer schema of a Confluent Avro value's id, when known without waiting
   * (AvroSerde.knownWriterType): the value is then masked field by field.
   */
  valueSchema?: WriterSchemaLookup
}

/** The error's message with card numbers and IBANs masked, cut to DLQ_MESSAGE_MAX_CHARS. */
export function dlqReason(error: unknown): string {
  const text = maskSensitiveText(error instanceof Error ? error.message : String(error))
  return text.length <= DLQ_MESSAGE_MAX_CHARS
    ? text
    : `${text.slice(0, DLQ_MESSAGE_MAX_CHARS - 14)}...[truncated]`
}

/** The dlq.* headers for a failure of `source`. */
export function buildDlqHeaders(
  source: Omit<DlqSource, 'key' | 'value' | 'headers'>,
  failure: DlqFailure,
): Record<string, string> {
  const headers: Record<string, string> = {
    [DLQ_HEADERS.errorCode]: failure.code ?? errorCode(failure.error),
    [DLQ_HEADERS.errorMessage]: dlqReason(failure.error),
    [DLQ_HEADERS.errorName]: failure.error instanceof Error ? maskSensitiveText(failure.error.name) : typeof failure.error,
    [DLQ_HEADERS.sourceTopic]: source.topic,
    [DLQ_HEADERS.sourcePartition]: String(source.partition),
    [DLQ_HEADERS.sourceOffset]: source.offset,
    [DLQ_HEADERS.attempts]: String(failure.attempts),
    [DLQ_HEADERS.failedAt]: (failure.failedAt ?? new Date()).toISOString(),
  }
  if (source.timestamp !== undefined) headers[DLQ_HEADERS.sourceTimestamp] = source.timestamp
  if (failure.consumerGroup !== undefined) headers[DLQ_HEADERS.consumerGroup] = failure.consumerGroup
  return headers
}

/**
 * A DLQ record for `source`: original key and value (card numbers masked: the key
 * and headers as bytes of the same length, the value field by field when it decodes
 * as Avro with `options.valueSchema`, else as bytes), original headers kept, dlq.*
 * headers added.
 */
export function createDlqRecord(
  dlqTopic: string,
  source: DlqSource,
  failure: DlqFailure,
  options: DlqRecordOptions = {},
): DlqRecord {
  // The source's own headers are copied too, so they are masked like the key and value:
  // a producer may put a card reference or a description in one.
  const kept: RecordHeaders = {}
  let headersMasked = 0
  const maskHeader = (v: Buffer | string): Buffer | string => {
    if (typeof v === 'string') {
      const masked = maskPans(Buffer.from(v, 'utf8'))
      headersMasked += masked.masked
      return masked.masked === 0 ? v : masked.bytes.toString('utf8')
    }
    const masked = maskPans(v)
    headersMasked += masked.masked
    return masked.bytes
  }
  for (const [name, value] of Object.entries(source.headers ?? {})) {
    if (name.startsWith('dlq.') || value === undefined) continue
    kept[name] = Array.isArray(value) ? value.map(maskHeader) : maskHeader(value)
  }
  const key = source.key === null ? { bytes: null, masked: 0 } : maskPans(source.key)
  const value = source.value === null ? { bytes: null, masked: 0 } : maskRecordValue(source.value, options.valueSchema)
  const headers: RecordHeaders = { ...kept, ...buildDlqHeaders(source, failure) }
  const masked = key.masked + value.masked + headersMasked
  if (masked > 0) headers[DLQ_HEADERS.masked] = String(masked)
  return { topic: dlqTopic, key: key.bytes, value: value.bytes, headers }
}

/** Reads the dlq.* headers of a consumed DLQ record back into strings (for tools and tests). */
export function readDlqHeaders(
  headers: RecordHeaders | undefined,
): Partial<Record<keyof typeof DLQ_HEADERS, string>> {
  const out: Partial<Record<keyof typeof DLQ_HEADERS, string>> = {}
  for (const [field, name] of Object.entries(DLQ_HEADERS) as [keyof typeof DLQ_HEADERS, string][]) {
    const raw = headers?.[name]
    const value = Array.isArray(raw) ? raw[0] : raw
    if (value !== undefined) out[field] = Buffer.isBuffer(value) ? value.toString('utf8') : String(value)
  }
  return out
}
