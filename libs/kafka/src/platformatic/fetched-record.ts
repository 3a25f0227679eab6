import type { RecordsBatch } from '@platformatic/kafka'

type BatchRecord = RecordsBatch['records'][number]

/** One record as the reader hands it over: the bytes as written, nothing decoded. */
export interface ReadRecord {
  offset: bigint
  /** Milliseconds since the epoch (the record's CreateTime, or LogAppendTime if the topic uses it). */
  timestamp: bigint
  key: Buffer | null
  value: Buffer | null
  headers: ReadonlyArray<readonly [Buffer | null, Buffer | null]>
}

/**
 * A record of a fetch answer as TopicReader hands it over. Its offset and
 * timestamp are BigInt sums, computed when read: a table load reads millions
 * of records and asks for neither, and two BigInt operations a record were
 * measurable there (issue 22).
 */
export class FetchedRecord implements ReadRecord {
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly headers: ReadonlyArray<readonly [Buffer | null, Buffer | null]>
  readonly #batch: RecordsBatch
  readonly #record: BatchRecord
  readonly #appendTime: boolean

  constructor(batch: RecordsBatch, record: BatchRecord, appendTime: boolean) {
    this.key = record.key
    this.value = record.value
    this.headers = record.headers
    this.#batch = batch
    this.#record = record
    this.#appendTime = appendTime
  }

  get offset(): bigint {
    return this.#batch.firstOffset + BigInt(this.#record.offsetDelta)
  }

  /** Milliseconds since the epoch (the record's CreateTime, or LogAppendTime if the topic uses it). */
  get timestamp(): bigint {
    return recordTimestamp(this.#batch, this.#record, this.#appendTime)
  }

  /** As a plain object (logs, JSON, structured clones see the offset and timestamp too). */
  toJSON(): ReadRecord {
    return { offset: this.offset, timestamp: this.timestamp, key: this.key, value: this.value, headers: this.headers }
  }
}

const IS_CONTROL = 0x20
const LOG_APPEND_TIME = 0x08

/** A record's timestamp as Kafka defines it: its CreateTime, or the batch's LogAppendTime when the topic uses that. */
export function recordTimestamp(batch: RecordsBatch, record: BatchRecord, appendTime: boolean): bigint {
  return appendTime ? batch.maxTimestamp : batch.firstTimestamp + record.timestampDelta
}

/**
 * Calls `visit` for the data records of `batches` from offset `from` on, and
 * before `end` when given (a bounded read). A fetch answers whole batches: what
 * lies outside is skipped, offsets compared one by one only in a batch that
 * straddles either bound. Control batches (commit and abort markers) hold no data.
 */
export function forEachDataRecord(
  batches: readonly RecordsBatch[],
  from: bigint,
  end: bigint | undefined,
  visit: (batch: RecordsBatch, record: BatchRecord, appendTime: boolean) => void,
): void {
  for (const batch of batches) {
    if ((batch.attributes & IS_CONTROL) !== 0) continue
    const appendTime = (batch.attributes & LOG_APPEND_TIME) !== 0
    const whole = batch.firstOffset >= from && (end === undefined || batch.firstOffset + BigInt(batch.lastOffsetDelta) < end)
    for (const r of batch.records) {
      if (!whole) {
        const offset = batch.firstOffset + BigInt(r.offsetDelta)
        if (offset < from || (end !== undefined && offset >= end)) continue
      }
      visit(batch, r, appendTime)
    }
  }
}

/** The data records of `batches` from `from` on, and before `end` when given (forEachDataRecord), as FetchedRecords. */
export function fetchedRecords(batches: readonly RecordsBatch[], from: bigint, end: bigint | undefined): ReadRecord[] {
  const records: ReadRecord[] = []
  forEachDataRecord(batches, from, end, (batch, r, appendTime) => records.push(new FetchedRecord(batch, r, appendTime)))
  return records
}
