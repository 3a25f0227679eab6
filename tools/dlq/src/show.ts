import { AvroSerde, CONFLUENT_MAGIC_BYTE, DLQ_HEADERS, isRegistryUnavailable, SchemaRegistryUnavailableError } from '@tep/kafka'
import { maskPans, maskPansInText } from '@tep/observability'
import { REDRIVE_HEADERS, type DlqEntry } from './dlq-entry.ts'

/**
 * Headers the pipeline and this tool write from Kafka metadata (positions,
 * counts, times), never from a record's content. Shown as they are when they
 * hold only digits and time punctuation: the masker takes a 13-digit epoch-ms
 * timestamp that passes the Luhn check for a card number.
 */
const METADATA_HEADERS = new Set<string>([
  DLQ_HEADERS.sourcePartition,
  DLQ_HEADERS.sourceOffset,
  DLQ_HEADERS.sourceTimestamp,
  DLQ_HEADERS.attempts,
  DLQ_HEADERS.failedAt,
  DLQ_HEADERS.masked,
])
const METADATA_VALUE = /^[0-9TZ:.+-]*$/

function shownHeader(name: string, value: Buffer): string {
  const text = value.toString('utf8')
  if (METADATA_HEADERS.has(name) && METADATA_VALUE.test(text)) return text
  if (name === REDRIVE_HEADERS.from && /\/\d+\/\d+$/.test(text)) return text
  return maskedBytes(value).content
}

/** One DLQ record decoded for a human: every text masked (card numbers), bytes that are not text shown as hex. */
export interface ShownRecord {
  id: string
  timestamp: string
  key: string | null
  headers: Record<string, string>
  value: {
    /** `avro`: decoded with the writer schema of `schemaId`; `text`: valid UTF-8; `hex`: anything else; `null`: a tombstone. */
    encoding: 'avro' | 'text' | 'hex' | 'null'
    schemaId?: number
    /** Why it was not decoded as Avro, when it looks framed but did not decode. */
    undecoded?: string
    content: unknown
  }
}

/** Text without control characters (tab, newline and carriage return allowed) and without invalid UTF-8. */
function printable(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0x7f || c === 0xfffd) return false
  }
  return true
}

/** Bytes as masked text when they are text, else masked hex. */
export function maskedBytes(bytes: Buffer): { encoding: 'text' | 'hex'; content: string } {
  const masked = maskPans(bytes).bytes
  const text = masked.toString('utf8')
  return printable(text) ? { encoding: 'text', content: text } : { encoding: 'hex', content: masked.toString('hex') }
}

/** Avro values to JSON: bytes as masked text/hex, longs as numbers, card numbers masked in every string. */
function maskDecoded(value: unknown): unknown {
  if (typeof value === 'string') return maskPansInText(value)
  if (Buffer.isBuffer(value)) return maskedBytes(value).content
  if (typeof value === 'bigint') return value.toString()
  if (Array.isArray(value)) return value.map(maskDecoded)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskDecoded(v)]))
  return value
}

/**
 * Decodes `entry` for `show`. The value is decoded with the writer schema of its
 * schema id when it is Confluent-framed Avro and the registry knows the id; a
 * registry that cannot be reached is an error (the caller says so), any other
 * failure shows the bytes. Card numbers are masked everywhere, as the project's
 * logs and DLQ mask them (@tep/observability).
 */
export async function showRecord(entry: DlqEntry, serde: AvroSerde): Promise<ShownRecord> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(entry.headers)) headers[name] = shownHeader(name, value)
  const shown: ShownRecord = {
    id: entry.id,
    timestamp: new Date(entry.timestamp).toISOString(),
    key: entry.key === null ? null : maskedBytes(entry.key).content,
    headers,
    value: { encoding: 'null', content: null },
  }
  const value = entry.value
  if (value === null) return shown
  if (value.length >= 5 && value[0] === CONFLUENT_MAGIC_BYTE) {
    const schemaId = value.readInt32BE(1)
    try {
      const type = await serde.writerType(schemaId)
      shown.value = { encoding: 'avro', schemaId, content: maskDecoded(type.fromBuffer(value.subarray(5))) }
      return shown
    } catch (err) {
      if (err instanceof SchemaRegistryUnavailableError || isRegistryUnavailable(err)) throw err
      shown.value = { ...maskedBytes(value), schemaId, undecoded: maskPansInText((err as Error).message) }
      return shown
    }
  }
  shown.value = maskedBytes(value)
  return shown
}

/** `show` for a terminal: headers first, then the value (JSON when decoded). */
export function formatShown(r: ShownRecord): string {
  const lines = [`DLQ record ${r.id} (${r.timestamp})`, `key: ${r.key ?? '(null)'}`, 'headers:']
  const width = Math.max(0, ...Object.keys(r.headers).map((k) => k.length))
  for (const [k, v] of Object.entries(r.headers)) lines.push(`  ${k.padEnd(width)}  ${v}`)
  const v = r.value
  const what = v.encoding === 'avro' ? `Avro, schema id ${v.schemaId}` : v.encoding === 'null' ? 'null (tombstone)' : `${v.encoding}${v.undecoded === undefined ? '' : `, not decoded as Avro: ${v.undecoded}`}`
  lines.push(`value (${what}):`)
  lines.push(v.encoding === 'avro' ? JSON.stringify(v.content, null, 2) : String(v.content))
  return lines.join('\n')
}
