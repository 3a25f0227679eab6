import type { RecordsBatch } from '@platformatic/kafka'
import type { ReadRecord } from './topic-reader.ts'

type BatchRecord = RecordsBatch['records'][number]

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
    return this.#appendTime ? this.#batch.maxTimestamp : this.#batch.firstTimestamp + this.#record.timestampDelta
  }

  /** As a plain object (logs, JSON, structured clones see the offset and timestamp too). */
  toJSON(): ReadRecord {
    return { offset: this.offset, timestamp: this.timestamp, key: this.key, value: this.value, headers: this.headers }
  }
}
