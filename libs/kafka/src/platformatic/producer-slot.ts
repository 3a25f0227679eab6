import type { Producer } from '@platformatic/kafka'
import type { KafkaLogger } from '../logger.ts'
import { initTransactions, newTransactionalProducer, type KafkaConnection } from './connection.ts'

/**
 * The loop's one transactional producer, created (InitProducerId, which aborts
 * whatever a predecessor left open) on first use and thrown away after any
 * failed transaction: the client neither resets its sequence numbers nor
 * re-initialises after a failed send.
 */
export class ProducerSlot {
  #producer: Producer | undefined
  readonly #create: () => Producer
  readonly #logger: KafkaLogger

  constructor(connection: KafkaConnection, transactionalId: string, transactionTimeoutMs: number, logger: KafkaLogger) {
    this.#create = () => newTransactionalProducer(connection, transactionalId, transactionTimeoutMs)
    this.#logger = logger
  }

  async get(): Promise<Producer> {
    if (this.#producer !== undefined) return this.#producer
    const p = this.#create()
    this.#producer = p
    await initTransactions(p)
    return p
  }

  async drop(): Promise<void> {
    const p = this.#producer
    this.#producer = undefined
    await p?.close().catch((err: unknown) => this.#logger.warn({ err }, 'producer close failed'))
  }
}
