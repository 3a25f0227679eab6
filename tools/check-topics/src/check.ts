import { compareTopics, DLQ_CODE_HEADER, DLQ_SOURCE_HEADERS, REDRIVE_FROM_HEADER, type CompareSummary, type EnrichedRecord } from './compare.ts'
import type { CheckOptions } from './options.ts'
import { readCommitted, type TopicRecord } from './topic-reader.ts'
import { ValueDecoder } from './value-decoder.ts'

export interface CheckSummary extends CompareSummary {
  checkedAt: string
  brokers: string[]
  topics: CheckOptions['topics']
  window: { from?: string; to?: string } | null
  /** Enriched values that could not be decoded (only with a registry): counted as failures. */
  undecodable: number
}

const text = (b: Buffer | null) => (b === null ? null : b.toString('utf8'))

/** The raw record a DLQ record stands for, from its `dlq.source.*` headers, when it names one. */
function dlqSource(r: TopicRecord): { source: string } | Record<string, never> {
  const topic = r.headers.get(DLQ_SOURCE_HEADERS.topic)
  const partition = r.headers.get(DLQ_SOURCE_HEADERS.partition)
  const offset = r.headers.get(DLQ_SOURCE_HEADERS.offset)
  return topic === undefined || partition === undefined || offset === undefined ? {} : { source: `${topic}/${partition}/${offset}` }
}

/** Reads the three topics and compares them; the whole of `npm run check-topics` but the printing. */
export async function checkTopics(options: CheckOptions, onProgress?: (line: string) => void): Promise<CheckSummary> {
  const { raw, enriched, dlq } = options.topics
  let lastReport = 0
  const records = await readCommitted({
    brokers: options.brokers,
    security: options.security,
    topics: [raw, enriched, dlq],
    timeoutMs: options.timeoutMs,
    onProgress: (read, total) => {
      if (onProgress && Date.now() - lastReport > 2_000) {
        lastReport = Date.now()
        onProgress(`read ${read} of about ${total} records`)
      }
    },
  })
  const decoder = options.registryUrl ? new ValueDecoder(options.registryUrl, options.registrySecurity.auth) : undefined
  let undecodable = 0
  const enrichedRecords: EnrichedRecord[] = []
  for (const r of records.get(enriched) ?? []) {
    const rec: EnrichedRecord = { key: text(r.key), timestamp: r.timestamp }
    if (decoder && r.value) {
      try {
        const value = await decoder.decode(r.value)
        rec.transactionId = String(value.transactionId)
        rec.status = String(value.status)
      } catch {
        undecodable++
      }
    }
    enrichedRecords.push(rec)
  }
  const keyed = (r: TopicRecord) => ({ key: text(r.key), timestamp: r.timestamp })
  const summary = compareTopics({
    raw: (records.get(raw) ?? []).map((r) => {
      const redriveFrom = r.headers.get(REDRIVE_FROM_HEADER)
      const position = `${raw}/${r.partition}/${r.offset}`
      return redriveFrom === undefined ? { ...keyed(r), position } : { ...keyed(r), position, redriveFrom }
    }),
    enriched: enrichedRecords,
    dlq: (records.get(dlq) ?? []).map((r) => ({ ...keyed(r), code: r.headers.get(DLQ_CODE_HEADER), position: `${dlq}/${r.partition}/${r.offset}`, ...dlqSource(r) })),
    ...(options.window ? { window: options.window } : {}),
    ...(options.recordCodes ? { recordSpecificCodes: options.recordCodes } : {}),
    sampleSize: options.samples,
  })
  return {
    checkedAt: new Date().toISOString(),
    brokers: options.brokers,
    topics: options.topics,
    window: options.window
      ? {
          ...(options.window.from !== undefined ? { from: new Date(options.window.from).toISOString() } : {}),
          ...(options.window.to !== undefined ? { to: new Date(options.window.to).toISOString() } : {}),
        }
      : null,
    ...summary,
    undecodable,
    passed: summary.passed && undecodable === 0,
  }
}
