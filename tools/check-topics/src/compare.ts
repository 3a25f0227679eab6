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

/**
 * Set by `npm run dlq -- redrive` on a record it writes back to its source
 * topic: `<dlq topic>/<partition>/<offset>` of the DLQ record it came from.
 * Spelled out here rather than imported, like the DLQ header: the checker shares
 * no code with what it checks.
 */
export const REDRIVE_FROM_HEADER = 'tep-redrive-from'

export interface KeyedRecord {
  /** The record key as text; null keys compare equal to each other. */
  key: string | null
  /** Epoch ms. */
  timestamp: number
}

export interface RawRecord extends KeyedRecord {
  /** REDRIVE_FROM_HEADER: this raw record is a re-drive of the DLQ record at this position, not a new event. */
  redriveFrom?: string
  /** `<raw topic>/<partition>/<offset>`: what a DLQ record's source headers name. */
  position?: string
}

export interface DlqRecord extends KeyedRecord {
  /** `dlq.error.code` header, or undefined when the record has none. */
  code: string | undefined
  /** `<dlq topic>/<partition>/<offset>`, what a re-driven record's REDRIVE_FROM_HEADER names. */
  position?: string
  /**
   * `<raw topic>/<partition>/<offset>` from the record's `dlq.source.*` headers: the raw
   * record it stands for. It decides the record's key when the key was changed on the way
   * to the DLQ (card-number masking masks keys too, and about one 13-digit number in ten,
   * an epoch in milliseconds for one, passes the Luhn check).
   */
  source?: string
}

export const DLQ_SOURCE_HEADERS = { topic: 'dlq.source.topic', partition: 'dlq.source.partition', offset: 'dlq.source.offset' } as const

export interface EnrichedRecord extends KeyedRecord {
  /** `status` of the decoded value, when it was decoded. */
  status?: string
  /** `transactionId` of the decoded value, when it was decoded: must equal the key. */
  transactionId?: string
}

export interface CompareInput {
  raw: RawRecord[]
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
  /**
   * `byCode` counts the DLQ records of the checked raw records (and strays);
   * `keysFromSource` DLQ records whose key differs from that of the raw record their
   * source headers name (a masked key) and which count under the raw record's key.
   */
  dlq: { records: number; byCode: Record<string, number>; recordSpecific: number; fromFaults: number; keysFromSource: number }
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
  /**
   * Re-drives (`npm run dlq -- redrive`): `records` raw records carry the
   * re-drive header; `superseded` DLQ records were re-driven, so they are not an
   * outcome (the re-driven record's outcome is); `untraced` re-driven records
   * name a DLQ record that is not there (past the DLQ's retention) and are
   * checked as new raw records.
   */
  redriven: { records: number; superseded: number; untraced: number }
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

/** The DLQ records with the key of the raw record their source headers name, and how many that changed. */
function dlqKeyedBySource(raw: readonly RawRecord[], dlq: readonly DlqRecord[]): { dlq: DlqRecord[]; changed: number } {
  const keyAt = new Map<string, string | null>()
  for (const r of raw) if (r.position !== undefined) keyAt.set(r.position, r.key)
  let changed = 0
  const out = dlq.map((d) => {
    if (d.source === undefined || !keyAt.has(d.source)) return d
    const key = keyAt.get(d.source) as string | null
    if (key === d.key) return d
    changed++
    return { ...d, key }
  })
  return { dlq: out, changed }
}

export function compareTopics(original: CompareInput): CompareSummary {
  const keyedBySource = dlqKeyedBySource(original.raw, original.dlq)
  const input = { ...original, dlq: keyedBySource.dlq }
  const recordSpecific = new Set(input.recordSpecificCodes ?? RECORD_SPECIFIC_DLQ_CODES)
  const sampleSize = input.sampleSize ?? 20
  const expected = new Map<string, number>() // keys with a raw record in the window -> all their raw records
  const known = new Set<string>() // every raw key, window or not
  const occurrences = new Map<string, number>() // raw records of each key, window or not (re-drives of a DLQ record excluded)
  // A raw event that was dead-lettered and re-driven is one event: raw -> DLQ record -> re-driven raw -> outcome.
  // The DLQ record it names is superseded (not an outcome) and the re-driven record is not a new event, so the
  // event still needs exactly one final outcome, in or out of the window of its first occurrence.
  const dlqPositions = new Set<string>()
  for (const d of input.dlq) if (d.position !== undefined) dlqPositions.add(d.position)
  const superseded = new Set<string>()
  let redrivenRecords = 0
  let untraced = 0
  let inWindowCount = 0
  for (const r of input.raw) {
    const k = keyOf(r.key)
    known.add(k)
    if (r.redriveFrom !== undefined) {
      redrivenRecords++
      if (dlqPositions.has(r.redriveFrom)) {
        // Not a new event. A second re-drive of the same DLQ record (--force-again) supersedes nothing more,
        // so its outcome is one too many: reported as duplicated.
        superseded.add(r.redriveFrom)
        continue
      }
      untraced++
    }
    occurrences.set(k, (occurrences.get(k) ?? 0) + 1)
    if (!inWindow(r.timestamp, input.window)) continue
    inWindowCount++
    expected.set(k, (expected.get(k) ?? 0) + 1)
  }
  // Outcomes are counted for a checked key wherever they are, so its raw records must be too: a key
  // checked in the window that was published again after it (the refresher re-enriching an
  // invalidated handle, REENRICH_HANDLES) has two raw records and rightly two outcomes. Counting
  // only the copy in the window reported the second outcome as a duplicate.
  for (const k of expected.keys()) expected.set(k, occurrences.get(k) ?? 0)
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
  let supersededCount = 0
  for (const d of input.dlq) {
    if (d.position !== undefined && superseded.has(d.position)) {
      supersededCount++
      continue
    }
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
    dlq: { records: input.dlq.length, byCode, recordSpecific: recordSpecificCount, fromFaults: fromFaults.length, keysFromSource: keyedBySource.changed },
    lost: lostCount,
    duplicated: duplicatedCount,
    dlqFromFaults: fromFaults.length,
    unexpected: unexpected.length,
    keyMismatches: keyMismatches.length,
    redriven: { records: redrivenRecords, superseded: supersededCount, untraced },
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
