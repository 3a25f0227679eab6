/**
 * Card-number masking of what goes to a DLQ: keys, values, headers (reasons are
 * masked with IBANs by dlq-record.ts). The one definition of a card number is
 * @tep/observability's pan-masking.ts; this file adds what only Kafka records need.
 *
 * A value that decodes as Avro (Confluent framing, the writer schema of its id
 * known to the caller, every byte of the body read) is masked field by field:
 * every string at any depth (records, arrays, map keys and values, union branches)
 * as text, every bytes or fixed value as bytes, then encoded again. That is exact
 * where scanning the frame is not: a string's zig-zag length byte is an ASCII digit
 * for lengths 24-28 and glues itself to the first digits of the string, and a
 * fullwidth digit is three bytes of which none is a digit. Everything else (not
 * Avro, an unknown schema id, a body that does not decode to its end) is scanned
 * as bytes by maskPans, which sees through all of that too, only less precisely.
 */
import { maskPans, maskPansCounted } from '@tep/observability'
import type avro from 'avsc'
import { CONFLUENT_MAGIC_BYTE } from './avro-serde.ts'

export { findPanDigits, maskPans, maskPansInText } from '@tep/observability'

/** The writer schema of a registry id, when the caller knows it without waiting (else undefined). */
export type WriterSchemaLookup = (schemaId: number) => avro.Type | undefined

const HEADER_BYTES = 5

/**
 * `value` with every card number masked, how many, and whether field by field (as
 * Avro) or as bytes; `value` itself when none was found.
 */
export function maskRecordValue(
  value: Buffer,
  writerSchema?: WriterSchemaLookup,
): { bytes: Buffer; masked: number; as: 'avro' | 'bytes' } {
  const avroMasked = writerSchema === undefined ? undefined : maskAvroValue(value, writerSchema)
  if (avroMasked !== undefined) return { ...avroMasked, as: 'avro' }
  return { ...maskPans(value), as: 'bytes' }
}

/** Field-by-field masking of a Confluent Avro value; undefined when it is not one this schema reads whole. */
function maskAvroValue(value: Buffer, writerSchema: WriterSchemaLookup): { bytes: Buffer; masked: number } | undefined {
  if (value.length < HEADER_BYTES || value[0] !== CONFLUENT_MAGIC_BYTE) return undefined
  const type = writerSchema(value.readInt32BE(1))
  if (type === undefined) return undefined
  const body = value.subarray(HEADER_BYTES)
  let decoded: { value: unknown; offset: number }
  try {
    decoded = type.decode(body, 0)
  } catch {
    return undefined
  }
  if (decoded.offset !== body.length) return undefined
  const count = { masked: 0 }
  const out = maskValue(type, decoded.value, count)
  if (count.masked === 0) return { bytes: value, masked: 0 }
  let encoded: Buffer
  try {
    encoded = type.toBuffer(out)
  } catch {
    // Masked text no longer fits its type (it cannot: strings stay strings); the bytes path then.
    return undefined
  }
  return { bytes: Buffer.concat([value.subarray(0, HEADER_BYTES), encoded]), masked: count.masked }
}

interface TypeShape {
  typeName: string
  fields?: { name: string; type: avro.Type }[]
  types?: avro.Type[]
  itemsType?: avro.Type
  valuesType?: avro.Type
  underlyingType?: avro.Type
  branchName?: string
}

function maskText(text: string, count: { masked: number }): string {
  const r = maskPansCounted(text)
  count.masked += r.masked
  return r.text
}

/** `v` (a value of `type` as avsc decodes it) with every string and bytes value masked, mutated in place where it is an object. */
function maskValue(type: avro.Type, v: unknown, count: { masked: number }): unknown {
  const t = type as unknown as TypeShape
  switch (t.typeName) {
    case 'string':
      return typeof v === 'string' ? maskText(v, count) : v
    case 'bytes':
    case 'fixed': {
      if (!Buffer.isBuffer(v)) return v
      const r = maskPans(v)
      count.masked += r.masked
      return r.bytes
    }
    case 'record':
    case 'error': {
      if (v === null || typeof v !== 'object') return v
      const rec = v as Record<string, unknown>
      for (const f of t.fields ?? []) rec[f.name] = maskValue(f.type, rec[f.name], count)
      return rec
    }
    case 'array':
      return Array.isArray(v) ? v.map((item) => maskValue(t.itemsType!, item, count)) : v
    case 'map': {
      if (v === null || typeof v !== 'object') return v
      const out: Record<string, unknown> = {}
      for (const [k, item] of Object.entries(v)) out[maskText(k, count)] = maskValue(t.valuesType!, item, count)
      return out
    }
    case 'union:unwrapped': {
      if (v === null) return v
      const branch = t.types?.find((b) => (b as unknown as TypeShape).typeName !== 'null' && b.isValid(v))
      return branch === undefined ? v : maskValue(branch, v, count)
    }
    case 'union:wrapped': {
      if (v === null || typeof v !== 'object') return v
      const [name] = Object.keys(v)
      const branch = t.types?.find((b) => (b as unknown as TypeShape).branchName === name)
      if (name === undefined || branch === undefined) return v
      return { [name]: maskValue(branch, (v as Record<string, unknown>)[name], count) }
    }
    default:
      // Logical types over strings (uuid, decimal-as-string): the logical value is the string.
      if (t.typeName.startsWith('logical:') && typeof v === 'string' && t.underlyingType !== undefined)
        return maskValue(t.underlyingType, v, count)
      return v
  }
}
