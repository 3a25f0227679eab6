import type { Consumer, MessageToProduce, Producer } from '@platformatic/kafka'
import { compatibilityPartitioner } from '@platformatic/kafka'
import { errorCode } from '@tep/errors'
import { createDlqRecord, readDlqHeaders } from '../dlq-record.ts'
import type { WriterSchemaLookup } from '../pan-masking.ts'
import type { OutputRecord, PipelineRecord, RecordHeaders } from '../pipeline-types.ts'
import { javaPartition } from './java-partitioner.ts'
import type { InputMessage } from './input-message.ts'
import type { Taken } from './partition-state.ts'
import type { TxnOffsetCommitter } from './txn-offset-commit.ts'

/**
 * Bytes of keys+values of one output partition per `send`. The broker refuses a
 * produce request whose batch for one partition exceeds message.max.bytes (1 MB
 * by default): a single send of a large transaction failed MESSAGE_TOO_LARGE.
 */
export const PARTITION_CHUNK_BYTES = 512 * 1024

/**
 * Bytes of keys+values per `send` over all partitions. Each send is a round trip
 * the transaction waits for (sends run one after the other to keep the
 * idempotent sequence order), so the bound is per partition above and only
 * loose here: a 3,000-record transaction of the ingest is one send, not five.
 */
export const SEND_CHUNK_BYTES = 8 * 1024 * 1024

export type WireMessage = MessageToProduce<Buffer, Buffer, Buffer, Buffer>

/**
 * Platformatic's consumed message as the transform sees records (KafkaJS-shaped,
 * bytes untouched). topic, partition, key and value are plain fields; the
 * string forms of offset and timestamp and the headers object are getters on
 * the prototype, made when first read: an identity or enrichment transform
 * reads none of them, and per record they were the loop's costliest step.
 * A class, not an object literal with getters: the literal made three
 * closures per record (a twentieth of an exactly-once pass-through's CPU, with
 * their garbage). Spreading a record copies only the plain fields.
 */
export class ConsumedRecord implements PipelineRecord {
  readonly topic: string
  readonly partition: number
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly #message: InputMessage
  #headers: RecordHeaders | undefined

  constructor(message: InputMessage) {
    this.topic = message.topic
    this.partition = message.partition
    this.key = message.key ?? null
    this.value = message.value ?? null
    this.#message = message
  }

  get offset(): string {
    return this.#message.offset.toString()
  }

  get timestamp(): string {
    return this.#message.timestamp.toString()
  }

  get headers(): RecordHeaders {
    return (this.#headers ??= headersOf(this.#message))
  }

  /** The fields as a KafkaJS record has them (JSON, logs, test comparisons). */
  toJSON(): PipelineRecord {
    return { topic: this.topic, partition: this.partition, offset: this.offset, key: this.key, value: this.value, headers: this.headers, timestamp: this.timestamp }
  }
}

export function toPipelineRecord(message: InputMessage): PipelineRecord {
  return new ConsumedRecord(message)
}

function headersOf(message: InputMessage): RecordHeaders {
  const headers: RecordHeaders = {}
  for (const [key, raw] of message.headerEntries) {
    const name = key?.toString('utf8') ?? ''
    // A null header value reads as undefined, as it did through the client's stream.
    const value = (raw ?? undefined) as Buffer
    const existing = headers[name]
    if (existing === undefined) headers[name] = value
    else headers[name] = [...(Array.isArray(existing) ? existing : [existing]), value]
  }
  return headers
}

const asBuffer = (v: string | Buffer): Buffer => (typeof v === 'string' ? Buffer.from(v) : v)

function wireHeaders(headers: RecordHeaders | undefined): Map<Buffer, Buffer> | undefined {
  if (headers === undefined) return undefined
  const map = new Map<Buffer, Buffer>()
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    // A Map keyed by Buffer keeps repeated header names as separate entries.
    for (const v of Array.isArray(value) ? value : [value]) map.set(Buffer.from(name), asBuffer(v))
  }
  return map
}

/** An output (or DLQ) record in @platformatic/kafka's produce shape. */
export function toWireMessage(output: OutputRecord): WireMessage {
  const message: WireMessage = { topic: output.topic }
  if (output.key !== null) message.key = asBuffer(output.key)
  // A tombstone: no value (the record is written with a null value).
  if (output.value !== null) message.value = output.value
  const headers = wireHeaders(output.headers)
  if (headers !== undefined && headers.size > 0) message.headers = headers
  if (output.partition !== undefined) message.partition = output.partition
  return message
}

/**
 * Gives every message without an explicit partition the one Java's default
 * partitioner would choose (java-partitioner.ts: what compatibilityPartitioner
 * gives, faster), so that sends can be sized per partition.
 */
export function assignPartitions(messages: WireMessage[], partitionCount: (topic: string) => number): void {
  for (const m of messages) {
    if (m.partition !== undefined) continue
    const count = partitionCount(m.topic)
    m.partition = javaPartition(m.key as Buffer | undefined, count)
  }
}

const messageBytes = (m: WireMessage): number => (m.key?.length ?? 0) + (m.value?.length ?? 0) + 64

/**
 * Splits messages, in order, into sends in which no partition gets more than
 * `partitionBytes` and the whole send stays under `sendBytes` (a message larger
 * than that goes alone). Messages need their partition (assignPartitions).
 */
export function chunkMessages(
  messages: WireMessage[],
  partitionBytes = PARTITION_CHUNK_BYTES,
  sendBytes = SEND_CHUNK_BYTES,
): WireMessage[][] {
  const chunks: WireMessage[][] = []
  let current: WireMessage[] = []
  let total = 0
  // Bytes so far per topic and partition (index partition + 1: -1 is "not assigned"); no key string per message.
  let perPartition = new Map<string, number[]>()
  for (const m of messages) {
    const size = messageBytes(m)
    const at = (m.partition ?? -1) + 1
    let sizes = perPartition.get(m.topic)
    const inPartition = sizes?.[at] ?? 0
    if (current.length > 0 && (inPartition + size > partitionBytes || total + size > sendBytes)) {
      chunks.push(current)
      current = []
      total = 0
      perPartition = new Map()
      sizes = undefined
    }
    if (sizes === undefined) {
      sizes = []
      perPartition.set(m.topic, sizes)
    }
    current.push(m)
    total += size
    sizes[at] = (sizes[at] ?? 0) + size
  }
  if (current.length > 0) chunks.push(current)
  return chunks
}

/** Where a failed commit got to: after EndTxn was sent its outcome is unknown. */
export class CommitFailure extends Error {
  readonly outcomeUnknown: boolean
  constructor(cause: unknown, outcomeUnknown: boolean) {
    super(`transaction ${outcomeUnknown ? 'commit outcome unknown' : 'aborted'}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
    this.outcomeUnknown = outcomeUnknown
  }
}

/**
 * One Kafka transaction: the outputs (chunked, in order, so each output
 * partition keeps the input order) and, for every input partition in it, the
 * offset after its last record. The offsets go as TxnOffsetCommit with the
 * group generation and member id the records were fetched under (KIP-447): if
 * the group rebalanced since, the coordinator refuses them and nothing of the
 * transaction becomes visible.
 */
export async function commitTransaction(
  producer: Producer,
  consumer: Consumer,
  offsets: TxnOffsetCommitter,
  outputs: WireMessage[],
  lastRecords: InputMessage[],
): Promise<void> {
  const topics = [...new Set(outputs.map((m) => m.topic))]
  // Cached by the client (metadataMaxAge): no round trip per transaction.
  const metadata = topics.length === 0 ? undefined : await producer.metadata({ topics })
  assignPartitions(outputs, (topic) => {
    const count = metadata?.topics.get(topic)?.partitionsCount
    if (count === undefined || count < 1) throw new Error(`no partition count for output topic ${topic}`)
    return count
  })
  const tx = await producer.beginTransaction()
  let endTxnSent = false
  try {
    // Four steps, where one after the other a transaction was five round trips (about
    // 12 ms of each commit's 30 at 3,000 records under full load, DECISIONS.md):
    // 1. Every output partition is added (one AddPartitionsToTxn; the sends then find them
    //    added). AddOffsetsToTxn must not go beside it: it is answered
    //    CONCURRENT_TRANSACTIONS and retried (tried: 11 ms became 15-45 ms at 1,000 ev/s).
    // 2. The sends (to the partition leaders) beside AddOffsetsToTxn (to the transaction
    //    coordinator).
    // 3. TxnOffsetCommit, only after the sends: the group coordinator and the partition
    //    leaders both verify the transaction with the transaction coordinator (KIP-890,
    //    Kafka 3.6+), which keeps one check per transactional id and answers the older
    //    NETWORK_EXCEPTION when a newer comes. Side by side, most transactions under load
    //    had a Produce refused (NOT_ENOUGH_REPLICAS, "Unable to verify the partition has
    //    been added to the transaction") or a TxnOffsetCommit answered
    //    COORDINATOR_LOAD_IN_PROGRESS, each retried (DECISIONS.md).
    // 4. EndTxn.
    if (metadata !== undefined) await tx.addPartitions(metadata, outputs as Parameters<typeof tx.addPartitions>[1])
    const settled = await Promise.allSettled([
      (async () => {
        for (const chunk of chunkMessages(outputs)) await tx.send({ messages: chunk, partitioner: compatibilityPartitioner })
      })(),
      tx.addConsumer(consumer),
    ])
    // Both finished either way: nothing of this transaction is still in flight when it is aborted.
    for (const r of settled) if (r.status === 'rejected') throw r.reason
    await offsets.commit(producer, consumer, tx.id, lastRecords)
    endTxnSent = true
    await tx.commit()
  } catch (err) {
    if (!tx.completed) await tx.abort().catch(() => undefined)
    throw new CommitFailure(err, endTxnSent)
  }
}

export interface DeadLettered {
  record: PipelineRecord
  code: string
  /** The error's message, card numbers and IBANs masked (what the DLQ header holds). */
  message: string
  /** Card numbers masked in the DLQ record (key, value, headers). */
  maskedPans: number
}

/**
 * What one transaction writes: every output, and a DLQ record for every record
 * whose failure belongs to it; the dead letters per taken batch, for the hooks.
 */
export function transactionWrites(
  live: Taken[],
  dlqTopic: string,
  groupId: string,
  dlqValueSchema?: WriterSchemaLookup,
): { writes: WireMessage[]; deadLettered: Map<Taken, DeadLettered[]> } {
  const writes: WireMessage[] = []
  const deadLettered = new Map<Taken, DeadLettered[]>()
  for (const t of live) {
    const dl: DeadLettered[] = []
    for (const { outcome: o } of t.done) {
      if (o.kind === 'outputs') for (const out of o.outputs) writes.push(toWireMessage(out))
      else {
        const dlq = createDlqRecord(
          dlqTopic,
          o.record,
          { error: o.error, attempts: t.state.failures + 1, consumerGroup: groupId },
          dlqValueSchema === undefined ? {} : { valueSchema: dlqValueSchema },
        )
        writes.push(toWireMessage(dlq))
        const headers = readDlqHeaders(dlq.headers)
        dl.push({ record: o.record, code: errorCode(o.error), message: headers.errorMessage ?? '', maskedPans: Number(headers.masked ?? 0) })
      }
    }
    deadLettered.set(t, dl)
  }
  return { writes, deadLettered }
}
