import { AvroSerde, createRecordProducer, createSchemaRegistry, TOPICS, type Kafka, type OutgoingMessage, type RecordProducer, type TopicCodec } from '@tep/kafka'
import { generateRawEvents } from '@tep/sample-traffic'
import type { RawTransaction } from '@tep/schemas'
import { SimDataset } from '@tep/sim-data'

export interface ExtraRecord {
  key: string
  value: Buffer
}

/**
 * Card and transfer traffic drawn from the simulator's samples (the same
 * generator `npm start` uses), produced at a steady rate with an idempotent
 * producer. A batch that fails (broker down) is sent again until it goes
 * through: the harness never drops input, and a batch written twice by such a
 * retry is two raw records that each need an outcome, which the check counts.
 * After a failed send the producer is replaced: an idempotent producer that
 * keeps its sequence numbers after a partition's leader moved can have every
 * later batch refused with OUT_OF_ORDER_SEQUENCE_NUMBER (seen with KafkaJS on
 * the three-broker cluster: the same batch retried for minutes). A new producer
 * gets a new producer id and starts its sequences at 0.
 */
export class Traffic {
  produced = 0
  sendFailures = 0
  private producer: RecordProducer
  private readonly kafka: Kafka
  readonly codec: TopicCodec<RawTransaction>
  private readonly dataset = new SimDataset()
  private round = 0
  private readonly runId: string

  constructor(kafka: Kafka, registryUrl: string, runId: string) {
    this.kafka = kafka
    this.producer = this.newProducer()
    this.codec = new AvroSerde({ registry: createSchemaRegistry({ url: registryUrl }) }).topic(TOPICS.transactionsRaw, 'RawTransaction')
    this.runId = runId
  }

  private newProducer(): RecordProducer {
    return createRecordProducer(this.kafka)
  }

  async connect(): Promise<void> {
    await this.codec.register()
  }

  /**
   * `count` raw events at about `perSecond`, with `extra(n)` records (fuzz) mixed
   * into each batch; then, while `trickleWhile()` holds (faults still being
   * injected), a tenth of that rate, so every fault meets live traffic;
   * `stopWhen()` ends it early (checked before every batch).
   */
  async run(options: { prefix: string; count: number; perSecond: number; extra?: (batchSize: number) => Promise<ExtraRecord[]>; trickleWhile?: () => boolean; stopWhen?: () => boolean }): Promise<void> {
    const tickMs = 250
    const perTick = Math.max(1, Math.round((options.perSecond * tickMs) / 1000))
    const trickle = Math.max(1, Math.round(perTick / 10))
    let sent = 0
    let next = Date.now()
    for (;;) {
      // The soak's traffic runs for a time, not a count: it stops when told.
      if (options.stopWhen?.()) break
      const main = sent < options.count
      if (!main && !options.trickleWhile?.()) break
      const n = main ? Math.min(perTick, options.count - sent) : trickle
      const round = this.round++
      const events = generateRawEvents(this.dataset, { count: n, seed: round, idPrefix: `${options.prefix}-${this.runId}-${round}` })
      const messages: OutgoingMessage[] = events.map((e) => ({ key: e.raw.transactionId, value: this.codec.encodeSync(e.raw) }))
      if (options.extra) messages.push(...(await options.extra(n)))
      await this.send(messages)
      sent += n
      next += tickMs
      const wait = next - Date.now()
      if (wait > 0) await new Promise((r) => setTimeout(r, wait))
      else next = Date.now() // behind (broker down, machine busy): carry on from now, do not burst
    }
  }

  async send(messages: OutgoingMessage[]): Promise<void> {
    for (;;) {
      try {
        await this.producer.send(TOPICS.transactionsRaw, messages)
        this.produced += messages.length
        return
      } catch {
        this.sendFailures++
        await new Promise((r) => setTimeout(r, 1_000))
        const old = this.producer
        this.producer = this.newProducer()
        await old.close().catch(() => {})
      }
    }
  }

  async close(): Promise<void> {
    await this.producer.close().catch(() => {})
  }
}
