import type { Consumer, Kafka } from 'kafkajs'
import { TOPICS, type TopicCodec } from '@tep/kafka'
import type { EnrichedTransaction } from '@tep/schemas'

const WATCHED = [
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

/**
 * Counts what flows through the pipeline's topics (read committed, so only what
 * was really committed) and keeps the last few enriched transactions to show.
 */
export class LiveView {
  readonly counts = new Map<string, number>()
  readonly statuses = new Map<string, number>()
  readonly recent: string[] = []
  private consumer: Consumer | undefined

  private readonly options: { kafka: Kafka; enriched: TopicCodec<EnrichedTransaction>; groupId: string }

  constructor(options: LiveView['options']) {
    this.options = options
  }

  async start(): Promise<void> {
    const consumer = this.options.kafka.consumer({ groupId: this.options.groupId, readUncommitted: false, allowAutoTopicCreation: false, maxWaitTimeInMs: 250 })
    this.consumer = consumer
    await consumer.connect()
    await consumer.subscribe({ topics: [...WATCHED], fromBeginning: false })
    await consumer.run({
      eachBatch: async ({ batch }) => {
        this.counts.set(batch.topic, (this.counts.get(batch.topic) ?? 0) + batch.messages.length)
        if (batch.topic !== TOPICS.transactionsEnriched) return
        for (const message of batch.messages) {
          try {
            const e = await this.options.enriched.decode(message.value)
            this.statuses.set(e.status, (this.statuses.get(e.status) ?? 0) + 1)
            this.recent.unshift(describe(e))
            this.recent.length = Math.min(this.recent.length, 5)
          } catch {
            // the view is best effort; ingest is what validates
          }
        }
      },
    })
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect()
  }
}

function describe(e: EnrichedTransaction): string {
  const raw = e.raw
  const input = raw.card ? (raw.card.description ?? raw.card.terminalId ?? raw.card.merchantId ?? '?') : `${raw.transfer?.scheme} ${raw.transfer?.counterpartyAccountNumber ?? raw.transfer?.counterpartyIban ?? ''}`
  const target = e.status === 'MATCHED' ? `${e.merchant?.name ?? '?'} · ${e.shop?.location?.address?.city ?? ''}` : e.status === 'REJECTED' ? `rejected: ${e.rejectReason?.code ?? ''}` : 'no shop found'
  return `${e.status.padEnd(9)} ${raw.amount} ${raw.currency}  ${String(input).slice(0, 28).padEnd(28)} → ${target}`
}
