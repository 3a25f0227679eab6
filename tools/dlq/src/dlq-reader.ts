import { createKafkaAdmin, describeTopics, scanTopic, type Kafka } from '@tep/kafka'
import { dlqEntry, type DlqEntry } from './dlq-entry.ts'
import { DlqUnavailableError } from './errors.ts'
import { Ledger } from './ledger.ts'

/** Rejects with DlqUnavailableError when `work` does not settle within `ms`. */
export async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DlqUnavailableError(`${what} did not answer within ${ms / 1000} s`)), ms)
  })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The topics of `names` that exist, and the number of records in `dlqTopic`
 * (for progress). Fails with DlqUnavailableError when the cluster does not
 * answer or the DLQ topic does not exist: before anything is read or written.
 */
export async function preflight(kafka: Kafka, brokers: string[], dlqTopic: string, names: string[], timeoutMs: number): Promise<{ existing: Set<string>; dlqRecords: bigint }> {
  const admin = createKafkaAdmin(kafka, '-dlq-preflight')
  let topics: string[]
  try {
    topics = await within(timeoutMs, `Kafka at ${brokers.join(',')}`, admin.listTopics())
  } catch (err) {
    throw new DlqUnavailableError(
      `cannot reach Kafka at ${brokers.join(',')} (${(err as Error).message}); nothing was read or written. Check --brokers / KAFKA_BROKERS and that the cluster is up, then run the command again.`,
      { cause: err },
    )
  } finally {
    await admin.close().catch(() => {})
  }
  const existing = new Set(topics.filter((t) => t === dlqTopic || names.includes(t)))
  if (!existing.has(dlqTopic)) throw new DlqUnavailableError(`the DLQ topic ${dlqTopic} does not exist on ${brokers.join(',')} (--dlq-topic)`, { details: { dlqTopic } })
  const described = await within(timeoutMs, `Kafka at ${brokers.join(',')}`, describeTopics(kafka, [dlqTopic]))
  let dlqRecords = 0n
  for (const p of described.topics.get(dlqTopic)?.partitions ?? []) dlqRecords += p.high - p.low
  return { existing, dlqRecords }
}

export interface ReadDlqOptions {
  kafka: Kafka
  dlqTopic: string
  /** Only records written at or after this (Kafka timestamp); a shortcut for --since. */
  from?: Date
  timeoutMs: number
  onProgress?: (read: number) => void
}

/** Every committed DLQ record (up to the end offsets at the start), in offset order per partition. */
export async function readDlq(options: ReadDlqOptions): Promise<DlqEntry[]> {
  const entries: DlqEntry[] = []
  let lastReport = Date.now()
  try {
    await scanTopic({
      kafka: options.kafka,
      topic: options.dlqTopic,
      ...(options.from === undefined ? {} : { from: options.from }),
      timeoutMs: options.timeoutMs,
      onMessage: (m, partition) => {
        entries.push(dlqEntry(m, partition))
        if (options.onProgress !== undefined && Date.now() - lastReport >= 2_000) {
          lastReport = Date.now()
          options.onProgress(entries.length)
        }
      },
    })
  } catch (err) {
    throw new DlqUnavailableError(`reading ${options.dlqTopic} failed: ${(err as Error).message}; nothing was written`, { cause: err })
  }
  return entries
}

/** The re-drive ledger; empty when its topic does not exist yet. */
export async function readLedger(kafka: Kafka, auditTopic: string, exists: boolean, timeoutMs: number): Promise<Ledger> {
  const ledger = new Ledger()
  if (!exists) return ledger
  try {
    await scanTopic({ kafka, topic: auditTopic, timeoutMs, onMessage: (m) => ledger.add(m.value) })
  } catch (err) {
    throw new DlqUnavailableError(`reading the re-drive ledger ${auditTopic} failed: ${(err as Error).message}; nothing was written`, { cause: err })
  }
  return ledger
}
