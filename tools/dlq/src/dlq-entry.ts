import { readDlqHeaders, type ScannedMessage } from '@tep/kafka'

/**
 * Headers a re-driven record carries on its source topic, so that downstream
 * (check-topics, an operator reading the topic) can tell it from a new event and
 * trace it to the DLQ record it came from. Not `dlq.*`: a re-driven record that
 * fails again keeps its own headers on its new DLQ record (createDlqRecord drops
 * only `dlq.*`), so the chain stays readable.
 */
export const REDRIVE_HEADERS = {
  /** The re-drive run (also the key of its audit records). */
  id: 'tep-redrive-id',
  /** `<dlq topic>/<partition>/<offset>` of the DLQ record that was re-driven. */
  from: 'tep-redrive-from',
} as const

/** One DLQ record as the tool sees it. */
export interface DlqEntry {
  partition: number
  offset: string
  /** `partition:offset`: how an operator names a DLQ record. */
  id: string
  /** Kafka timestamp (epoch ms). */
  timestamp: number
  /** `dlq.failed.at` (epoch ms), else the timestamp: what list buckets and --since/--until use. */
  failedAt: number
  /** `dlq.error.code`, or NO_CODE when the record has none. */
  code: string
  message: string | undefined
  sourceTopic: string | undefined
  sourcePartition: number | undefined
  sourceOffset: string | undefined
  /** Card numbers masked in the record when it was dead-lettered (`dlq.masked.pans`): its bytes are not the original ones. */
  maskedPans: number
  key: Buffer | null
  value: Buffer | null
  headers: Record<string, Buffer>
}

export const NO_CODE = '(no code)'

export function dlqEntry(message: ScannedMessage, partition: number): DlqEntry {
  const h = readDlqHeaders(message.headers)
  const timestamp = Number(message.timestamp)
  const failedAt = h.failedAt === undefined ? Number.NaN : Date.parse(h.failedAt)
  const sourcePartition = h.sourcePartition === undefined ? Number.NaN : Number(h.sourcePartition)
  return {
    partition,
    offset: message.offset,
    id: `${partition}:${message.offset}`,
    timestamp,
    failedAt: Number.isNaN(failedAt) ? timestamp : failedAt,
    code: h.errorCode ?? NO_CODE,
    message: h.errorMessage,
    sourceTopic: h.sourceTopic,
    sourcePartition: Number.isInteger(sourcePartition) ? sourcePartition : undefined,
    sourceOffset: h.sourceOffset,
    maskedPans: Number(h.masked ?? 0) || 0,
    key: message.key,
    value: message.value,
    headers: message.headers,
  }
}

const ID = /^(\d+):(\d+)$/

/** `partition:offset` → its parts, or undefined when `text` is not one. */
export function parseDlqId(text: string): { partition: number; offset: string } | undefined {
  const m = ID.exec(text.trim())
  if (m === null) return undefined
  return { partition: Number(m[1]), offset: BigInt(m[2]!).toString() }
}

/** Where a DLQ record is, as the re-driven record's header and the ledger name it. */
export function dlqPosition(dlqTopic: string, entry: Pick<DlqEntry, 'partition' | 'offset'>): string {
  return `${dlqTopic}/${entry.partition}/${entry.offset}`
}

/**
 * The headers a re-driven record is produced with: the record's own headers
 * (the ones the DLQ kept, without the dlq.* diagnosis and without the marks of
 * an earlier re-drive) plus this re-drive's id and the DLQ position.
 */
export function redriveHeaders(dlqTopic: string, entry: DlqEntry, redriveId: string): Record<string, Buffer | string> {
  const out: Record<string, Buffer | string> = {}
  for (const [name, value] of Object.entries(entry.headers)) {
    if (name.startsWith('dlq.') || name === REDRIVE_HEADERS.id || name === REDRIVE_HEADERS.from) continue
    out[name] = value
  }
  out[REDRIVE_HEADERS.id] = redriveId
  out[REDRIVE_HEADERS.from] = dlqPosition(dlqTopic, entry)
  return out
}
