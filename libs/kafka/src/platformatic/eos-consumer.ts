import { Consumer, type GroupAssignment, type MessagesStream } from '@platformatic/kafka'
import type { KafkaLogger } from '../logger.ts'
import type { TransactionalPipelineOptions } from '../pipeline-options.ts'
import type { KafkaConnection } from './connection.ts'
import { eosConsumerOptions } from './eos-options.ts'
import type { FetchControl } from './fetch-control.ts'
import type { FetchedMessage } from './input-message.ts'

export interface EosConsumerEvents {
  onAssignment(assignments: GroupAssignment[] | undefined): void
  /** The records of one partition from one fetch, in offset order. */
  onRecords(topic: string, partition: number, messages: FetchedMessage[]): void
  /** The client gave up: a fetch, a group rejoin, or heartbeats. The consumer is of no further use. */
  onFailure(reason: string, error: unknown): void
}

export interface EosConsumerSettings {
  connection: KafkaConnection
  groupId: string
  topics: string[]
  consumer?: TransactionalPipelineOptions['consumer']
  fromBeginning?: boolean
}

/** How long leaving the group may take before the consumer is closed without it. */
const LEAVE_TIMEOUT_MS = 5_000

/**
 * One group member of the exactly-once loop and its stream: read_committed,
 * starting at the committed offsets, fetches routed through the loop's
 * FetchControl, which hands their records over. Events of a closed session are ignored, so a consumer that is
 * being replaced cannot touch the loop's state any more.
 */
export class EosConsumer {
  readonly consumer: Consumer<Buffer, Buffer, Buffer, Buffer>
  stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> | undefined
  readonly #settings: EosConsumerSettings
  readonly #fetchControl: FetchControl
  readonly #events: EosConsumerEvents
  #live = true

  constructor(settings: EosConsumerSettings, fetchControl: FetchControl, events: EosConsumerEvents) {
    this.#settings = settings
    this.#fetchControl = fetchControl
    this.#events = events
    const c = new Consumer(eosConsumerOptions(settings.connection, settings.groupId, settings.consumer))
    this.consumer = c
    fetchControl.install(c, (topic, partition, messages) => {
      if (this.#live) events.onRecords(topic, partition, messages)
    })
    c.on('consumer:group:join', (payload) => {
      if (this.#live) events.onAssignment(payload.assignments)
    })
    // A rejoin the client gave up on is an 'error' event of the consumer, and no more
    // heartbeats follow: without this listener it would end the process.
    c.on('error', (error: Error) => this.#failed('consumer group membership failed', error))
    c.on('consumer:heartbeat:stalled', (payload: { lastError?: unknown }) =>
      this.#failed('consumer heartbeats stalled', payload.lastError ?? new Error('no heartbeat answered within the rebalance timeout')),
    )
  }

  /** Joins the group and starts the stream; throws while the cluster does not answer. */
  async open(): Promise<void> {
    const { topics, fromBeginning } = this.#settings
    const metadata = await this.consumer.metadata({ topics })
    for (const [topic, t] of metadata.topics) if (t?.id !== undefined) this.#fetchControl.setTopicId(topic, t.id)
    const s = await this.consumer.consume({
      topics,
      mode: 'committed',
      fallbackMode: fromBeginning === false ? 'latest' : 'earliest',
      autocommit: false,
      highWaterMark: 1_024,
    })
    this.stream = s
    this.#fetchControl.attach(s.offsetsToFetch)
    // The records come through FetchControl and the stream's batches are emptied: it
    // pushes nothing, but it fetches only while it flows, so it needs a reader.
    s.on('data', () => undefined)
    s.on('error', (error: Error) => this.#failed('consumer stream failed', error))
  }

  /** Closes the stream and the consumer, leaving the group when the coordinator answers in time. */
  async close(logger: KafkaLogger): Promise<void> {
    this.#live = false
    await this.stream?.close().catch((err: unknown) => logger.warn({ err }, 'stream close failed'))
    // Leaving the group lets the next member in at once; a dead coordinator must not hold the caller.
    const left = await Promise.race([
      this.consumer.close().then(
        () => true,
        () => false,
      ),
      new Promise<false>((r) => setTimeout(() => r(false), LEAVE_TIMEOUT_MS).unref()),
    ])
    if (!left) await this.consumer.close(true).catch(() => undefined)
  }

  #failed(reason: string, error: unknown): void {
    if (this.#live) this.#events.onFailure(reason, error)
  }
}
