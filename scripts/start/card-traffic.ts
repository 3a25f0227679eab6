import type { RecordProducer, TopicCodec } from '@tep/kafka'
import type { RawTransaction } from '@tep/schemas'
import { generateRawEvents } from '@tep/sample-traffic'
import type { SimDataset } from '@tep/sim-data'

/**
 * A stand-in for a card processor and a bank's transfer feed: raw events drawn
 * from the simulator's samples at a steady rate, plus now and then a record that
 * is not Avro at all, to show the dead-letter path.
 */
export class SampleTraffic {
  produced = 0
  private timer: NodeJS.Timeout | undefined
  private round = 0
  private inFlight: Promise<unknown> = Promise.resolve()

  private readonly options: { producer: RecordProducer; codec: TopicCodec<RawTransaction>; dataset: SimDataset; ratePerSecond: number; topic: string; runId: string }

  constructor(options: SampleTraffic['options']) {
    this.options = options
  }

  start(): void {
    const tickMs = 200
    const perTick = Math.max(1, Math.round((this.options.ratePerSecond * tickMs) / 1000))
    this.timer = setInterval(() => {
      this.inFlight = this.inFlight.then(() => this.sendBatch(perTick)).catch(() => {})
    }, tickMs)
  }

  private async sendBatch(count: number): Promise<void> {
    const round = this.round++
    const events = generateRawEvents(this.options.dataset, { count, seed: round, idPrefix: `demo-${this.options.runId}-${round}` })
    const messages = await Promise.all(events.map(async (e) => ({ key: e.raw.transactionId, value: await this.options.codec.encode(e.raw) })))
    if (round % 25 === 24) messages.push({ key: `demo-${this.options.runId}-${round}-garbage`, value: Buffer.from('{"not":"avro"}') })
    await this.options.producer.send(this.options.topic, messages)
    this.produced += messages.length
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await this.inFlight
  }
}
