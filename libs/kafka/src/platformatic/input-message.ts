import type { KafkaRecord, MessageConsumerMetadata, RecordsBatch } from '@platformatic/kafka'

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

  constructor(topic: string, partition: number, batch: RecordsBatch, record: KafkaRecord, offset: bigint, consumer: MessageConsumerMetadata) {
    this.topic = topic
    this.partition = partition
    this.key = record.key
    this.value = record.value
    this.offset = offset
    this.leaderEpoch = batch.partitionLeaderEpoch
    this.consumer = consumer
    this.#batch = batch
    this.#record = record
  }

  /** As the client's stream gives it: the batch's first timestamp plus the record's delta. */
  get timestamp(): bigint {
    return this.#batch.firstTimestamp + this.#record.timestampDelta
  }

  get headerEntries(): ReadonlyArray<readonly [Buffer | null, Buffer | null]> {
    return this.#record.headers
  }

  toJSON(): Record<string, unknown> {
    return { topic: this.topic, partition: this.partition, offset: this.offset.toString(), timestamp: this.timestamp.toString(), key: this.key, value: this.value }
  }
}

const IS_CONTROL = 0x20

/**
 * The data records of one partition's batches from offset `from` on (a fetch
 * answers whole batches, so the first may start before the offset asked for);
 * control batches (transaction markers) hold none.
 */
export function fetchedMessages(
  topic: string,
  partition: number,
  batches: readonly RecordsBatch[],
  from: bigint,
  consumer: MessageConsumerMetadata,
): FetchedMessage[] {
  const out: FetchedMessage[] = []
  for (const batch of batches) {
    if ((batch.attributes & IS_CONTROL) !== 0) continue
    const first = batch.firstOffset
    for (const record of batch.records) {
      const offset = first + BigInt(record.offsetDelta)
      if (offset < from) continue
      out.push(new FetchedMessage(topic, partition, batch, record, offset, consumer))
    }
  }
  return out
}
