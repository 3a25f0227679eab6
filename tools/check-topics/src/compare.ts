/**
 * The comparison at the heart of the checker, free of Kafka so it can be tested
 * on its own: every raw record must have exactly one outcome (an enriched record
 * or a DLQ record) under the same key, and a DLQ record is only acceptable when
 * its error code says the record itself is bad.
 */

/**
 * DLQ error codes that name a defect of the record itself (undecodable, schema
 * invalid, contradictory fields). Every other code (an API outage, a broker or
 * registry problem, a code nobody listed) means the pipeline dead-lettered a good
 * record because something around it failed: a failure of the run.
 */
export const RECORD_SPECIFIC_DLQ_CODES: readonly string[] = [
  'AVRO_BAD_MAGIC_BYTE',
  'AVRO_CORRUPT_PAYLOAD',
  'AVRO_EMPTY_VALUE',
  'AVRO_INCOMPATIBLE_SCHEMA',
  'AVRO_UNKNOWN_SCHEMA_ID',
  'EVENT_INVALID',
  'SCHEMA_INVALID',
  'RAW_CARD_AND_TRANSFER',
  'RAW_INVALID_FIELD',
  'RAW_NO_CARD_OR_TRANSFER',
  'RAW_SCHEMA_INVALID',
  'RAW_UNDECODABLE',
]

export const DLQ_CODE_HEADER = 'dlq.error.code'

export interface KeyedRecord {
  /** The record key as text; null keys compare equal to each other. */
  key: string | null
  /** Epoch ms. */
  timestamp: number
}

export interface DlqRecord extends KeyedRecord {
  /** `dlq.error.code` header, or undefined when the record has none. */
  code: string | undefined
}

export interface EnrichedRecord extends KeyedRecord {
  /** `status` of the decoded value, when it was decoded. */
  status?: string
  /** `transactionId` of the decoded value, when it was decoded: must equal the key. */
  transactionId?: string
}

export interface CompareInput {
  raw: KeyedRecord[]
  enriched: EnrichedRecord[]
  dlq: DlqRecord[]
  /** Only raw records with a timestamp in [from, to] are checked; their outcomes are looked up on the whole output. */
  window?: { from?: number; to?: number }
  recordSpecificCodes?: readonly string[]
  /** How many keys of each finding to list in the summary. Default 20. */
  sampleSize?: number
}

export interface CompareSummary {
  passed: boolean
  raw: { records: number; inWindow: number; repeatedKeys: number }
  enriched: { records: number; byStatus: Record<string, number> }
  /** `byCode` counts the DLQ records of the checked raw records (and strays). */
  dlq: { records: number; byCode: Record<string, number>; recordSpecific: number; fromFaults: number }
  /** Raw records (counted per occurrence) with no outcome. */
  lost: number
  /** Outcomes beyond one per raw occurrence. */
  duplicated: number
  /** DLQ records whose code is not record-specific. */
  dlqFromFaults: number
  /** Outcomes whose key never appeared on the raw topic. */
  unexpected: number
  /** Enriched records whose decoded transactionId differs from their key. */
  keyMismatches: number
  samples: { lost: string[]; duplicated: string[]; dlqFromFaults: Array<{ key: string | null; code: string }>; unexpected: string[]; keyMismatches: string[] }
}

const NULL_KEY = '\u0000null'
const keyOf = (k: string | null) => k ?? NULL_KEY
const shown = (k: string) => (k === NULL_KEY ? '<null key>' : k)

function inWindow(timestamp: number, window: CompareInput['window']): boolean {
  if (!window) return true
  if (window.from !== undefined && timestamp < window.from) return false
  if (window.to !== undefined && timestamp > window.to) return false
  return true
}

export function compareTopics(input: CompareInput): CompareSummary {
  const recordSpecific = new Set(input.recordSpecificCodes ?? RECORD_SPECIFIC_DLQ_CODES)
  const sampleSize = input.sampleSize ?? 20
  const expected = new Map<string, number>() // raw occurrences in the window
  const known = new Set<string>() // every raw key, window or not
  let inWindowCount = 0
  for (const r of input.raw) {
    const k = keyOf(r.key)
    known.add(k)
    if (!inWindow(r.timestamp, input.window)) continue
    inWindowCount++
    expected.set(k, (expected.get(k) ?? 0) + 1)
  }
  const outcomes = new Map<string, number>()
  const unexpected: string[] = []
  const count = (key: string | null) => {
    const k = keyOf(key)
    if (!known.has(k)) {
      unexpected.push(shown(k))
      return
    }
    if (expected.has(k)) outcomes.set(k, (outcomes.get(k) ?? 0) + 1)
  }

  const byStatus: Record<string, number> = {}
  const keyMismatches: string[] = []
  for (const e of input.enriched) {
    count(e.key)
    if (e.status !== undefined) byStatus[e.status] = (byStatus[e.status] ?? 0) + 1
    if (e.transactionId !== undefined && e.transactionId !== e.key) keyMismatches.push(`${shown(keyOf(e.key))} carries ${e.transactionId}`)
  }
  const byCode: Record<string, number> = {}
  const fromFaults: Array<{ key: string | null; code: string }> = []
  let recordSpecificCount = 0
  for (const d of input.dlq) {
    count(d.key)
    const code = d.code ?? '(no dlq.error.code header)'
    // Judged and counted only for outcomes of checked raw records (or strays): the window decides what is in scope.
    const k = keyOf(d.key)
    if (known.has(k) && !expected.has(k)) continue
    byCode[code] = (byCode[code] ?? 0) + 1
    if (d.code !== undefined && recordSpecific.has(d.code)) recordSpecificCount++
    else fromFaults.push({ key: d.key, code })
  }

  const lost: string[] = []
  const duplicated: string[] = []
  let lostCount = 0
  let duplicatedCount = 0
  let repeatedKeys = 0
  for (const [k, want] of expected) {
    if (want > 1) repeatedKeys++
    const got = outcomes.get(k) ?? 0
    if (got < want) {
      lostCount += want - got
      lost.push(shown(k))
    } else if (got > want) {
      duplicatedCount += got - want
      duplicated.push(shown(k))
    }
  }
  const summary: CompareSummary = {
    passed: false,
    raw: { records: input.raw.length, inWindow: inWindowCount, repeatedKeys },
    enriched: { records: input.enriched.length, byStatus },
    dlq: { records: input.dlq.length, byCode, recordSpecific: recordSpecificCount, fromFaults: fromFaults.length },
    lost: lostCount,
    duplicated: duplicatedCount,
    dlqFromFaults: fromFaults.length,
    unexpected: unexpected.length,
    keyMismatches: keyMismatches.length,
    samples: {
      lost: lost.slice(0, sampleSize),
      duplicated: duplicated.slice(0, sampleSize),
      dlqFromFaults: fromFaults.slice(0, sampleSize),
      unexpected: unexpected.slice(0, sampleSize),
      keyMismatches: keyMismatches.slice(0, sampleSize),
    },
  }
  summary.passed = lostCount === 0 && duplicatedCount === 0 && fromFaults.length === 0 && unexpected.length === 0 && keyMismatches.length === 0
  return summary
}
