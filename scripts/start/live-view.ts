import { TopicReader, TOPICS, type Kafka, type TopicCodec } from '@tep/kafka'
import type { EnrichedTransaction } from '@tep/schemas'
import type { PipelineExporter } from './pipeline-exporter.ts'

export const WATCHED = [
  TOPICS.transactionsRaw,
  TOPICS.transactionsEnriched,
  TOPICS.transactionsDlq,
  TOPICS.merchantInvalidations,
  TOPICS.merchantShops,
  TOPICS.merchantMerchants,
  TOPICS.merchantFetched,
  TOPICS.bankConsents,
  TOPICS.bankTransactions,
] as const

/** Window of the rates and latency quantiles the view shows. */
const WINDOW_MS = 10_000

/**
 * Counts what flows through the pipeline's topics (read committed, so only what
 * was really committed) from the moment it starts, and keeps the last few
 * enriched transactions to show; feeds the same observations to the pipeline
 * exporter when there is one. A TopicReader (no consumer group): every
 * partition of every watched topic.
 */
export class LiveView {
  readonly counts = new Map<string, number>()
  readonly statuses = new Map<string, number>()
  readonly recent: string[] = []
  private reader: TopicReader | undefined
  private readonly history: Array<{ at: number; counts: Map<string, number> }> = []
  private readonly latencies: Array<{ at: number; seconds: number }> = []

  private readonly options: { kafka: Kafka; enriched: TopicCodec<EnrichedTransaction>; exporter?: PipelineExporter }

  constructor(options: LiveView['options']) {
    this.options = options
  }

  async start(): Promise<void> {
    const reader = new TopicReader({
      kafka: this.options.kafka,
      topics: [...WATCHED],
      from: new Date(),
      follow: true,
      maxWaitMs: 250,
      onRecords: async (batch) => {
        if (batch.records.length === 0) return
        this.counts.set(batch.topic, (this.counts.get(batch.topic) ?? 0) + batch.records.length)
        this.options.exporter?.countRecords(batch.topic, batch.records.length)
        if (batch.topic !== TOPICS.transactionsEnriched) return
        for (const message of batch.records) {
          try {
            const e = await this.options.enriched.decode(message.value)
            const seconds = (Date.now() - Number(e.raw.receivedAt)) / 1000
            this.latencies.push({ at: Date.now(), seconds })
            this.options.exporter?.observeLatency(seconds)
            this.statuses.set(e.status, (this.statuses.get(e.status) ?? 0) + 1)
            this.recent.unshift(describe(e))
            this.recent.length = Math.min(this.recent.length, 5)
          } catch {
            // the view is best effort; ingest is what validates
          }
        }
      },
    })
    this.reader = reader
    await reader.start()
  }

  /** Records per second per topic over the last ~10 s (call once per refresh). */
  rates(now = Date.now()): Map<string, number> {
    this.history.push({ at: now, counts: new Map(this.counts) })
    while (this.history.length > 2 && now - this.history[1]!.at >= WINDOW_MS) this.history.shift()
    const first = this.history[0]!
    const seconds = (now - first.at) / 1000
    const rates = new Map<string, number>()
    for (const topic of WATCHED) rates.set(topic, seconds > 0 ? ((this.counts.get(topic) ?? 0) - (first.counts.get(topic) ?? 0)) / seconds : 0)
    return rates
  }

  /** End-to-end latency quantiles (seconds) of the enriched records seen in the last ~10 s. */
  latency(now = Date.now()): { p50: number; p99: number; count: number } | undefined {
    while (this.latencies.length > 0 && now - this.latencies[0]!.at > WINDOW_MS) this.latencies.shift()
    if (this.latencies.length === 0) return undefined
    const sorted = this.latencies.map((l) => l.seconds).sort((a, b) => a - b)
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!
    return { p50: at(0.5), p99: at(0.99), count: sorted.length }
  }

  async stop(): Promise<void> {
    await this.reader?.stop()
  }
}

function describe(e: EnrichedTransaction): string {
  const raw = e.raw
  const input = raw.card ? (raw.card.description ?? raw.card.terminalId ?? raw.card.merchantId ?? '?') : `${raw.transfer?.scheme} ${raw.transfer?.counterpartyAccountNumber ?? raw.transfer?.counterpartyIban ?? ''}`
  const target = e.status === 'MATCHED' ? `${e.merchant?.name ?? '?'} · ${e.shop?.location?.address?.city ?? ''}` : e.status === 'REJECTED' ? `rejected: ${e.rejectReason?.code ?? ''}` : 'no shop found'
  return `${e.status.padEnd(9)} ${raw.amount} ${raw.currency}  ${String(input).slice(0, 28).padEnd(28)} → ${target}`
}
