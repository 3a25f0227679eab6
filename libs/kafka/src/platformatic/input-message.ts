import type { KafkaRecord, MessageConsumerMetadata, RecordsBatch } from '@platformatic/kafka'
import { forEachDataRecord, recordTimestamp } from './fetched-record.ts'

/**
 * One input record as the exactly-once loop keeps it, from the moment it is
 * fetched until its transaction commits: where it came from (topic, partition,
 * offset, the batch's leader epoch) and the group generation it was fetched
 * under (KIP-447: the offsets are committed with that generation and member id).
 */
export interface InputMessage {
  readonly topic: string
  readonly partition: number
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly offset: bigint
  /** Milliseconds since the epoch. */
  readonly timestamp: bigint
  /** The epoch of the leader that wrote the record's batch: what TxnOffsetCommit takes as committedLeaderEpoch (KIP-320). */
  readonly leaderEpoch: number
  readonly headerEntries: ReadonlyArray<readonly [Buffer | null, Buffer | null]>
  readonly consumer: MessageConsumerMetadata
}

/**
 * An InputMessage made straight from the fetch answer's record batch, with
 * nothing copied but the fields the loop reads on every record; the timestamp
 * is a BigInt sum made only when read (an identity or enrichment transform
 * never reads it). This replaces the client's per-message object: its
 * MessagesStream made, per record, a copy of the record, a diagnostic
 * context, a headers Map, a bound commit function and a merged metadata
 * object, which were a fifth of an exactly-once pass-through's CPU
 * (DECISIONS.md, "The exactly-once loop takes the fetch answers' batches").
 */
export class FetchedMessage implements InputMessage {
  readonly topic: string
  readonly partition: number
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly offset: bigint
  readonly leaderEpoch: number
  readonly consumer: MessageConsumerMetadata
  readonly #batch: RecordsBatch
  readonly #record: KafkaRecord
  readonly #appendTime: boolean

  constructor(topic: string, partition: number, batch: RecordsBatch, record: KafkaRecord, offset: bigint, appendTime: boolean, consumer: MessageConsumerMetadata) {
    this.topic = topic
    this.partition = partition
    this.key = record.key
    this.value = record.value
    this.offset = offset
    this.leaderEpoch = batch.partitionLeaderEpoch
    this.consumer = consumer
    this.#batch = batch
    this.#record = record
    this.#appendTime = appendTime
  }

  /** The record's CreateTime, or the batch's LogAppendTime when the topic uses that (as TopicReader's records). */
  get timestamp(): bigint {
    return recordTimestamp(this.#batch, this.#record, this.#appendTime)
  }

  get headerEntries(): ReadonlyArray<readonly [Buffer | null, Buffer | null]> {
    return this.#record.headers
  }

  toJSON(): Record<string, unknown> {
    return { topic: this.topic, partition: this.partition, offset: this.offset.toString(), timestamp: this.timestamp.toString(), key: this.key, value: this.value }
  }
}

/**
 * The data records of one partition's batches from offset `from` on (a fetch
 * answers whole batches, so the first may start before the offset asked for).
 */
export function fetchedMessages(
  topic: string,
  partition: number,
  batches: readonly RecordsBatch[],
  from: bigint,
  consumer: MessageConsumerMetadata,
): FetchedMessage[] {
  const out: FetchedMessage[] = []
  forEachDataRecord(batches, from, undefined, (batch, record, appendTime) =>
    out.push(new FetchedMessage(topic, partition, batch, record, batch.firstOffset + BigInt(record.offsetDelta), appendTime, consumer)),
  )
  return out
}
