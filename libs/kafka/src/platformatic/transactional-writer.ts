import { requireConnection } from '../kafka-client.ts'
import { compatibilityPartitioner, type Producer } from '@platformatic/kafka'
import type { Kafka } from '../kafka-client.ts'
import { ProducerClosedError, ProducerFencedError } from '../errors.ts'
import { isFencedError } from '../fencing.ts'
import { SILENT_LOGGER, type KafkaLogger } from '../logger.ts'
import { initTransactions, newTransactionalProducer, type KafkaConnection } from './connection.ts'
import { planSends, toWireMessages, type OutgoingMessage } from './send-plan.ts'
import type { Tracer } from '@opentelemetry/api'
import { installedTracer, KAFKA_TRACER } from '../trace-context.ts'
import { WriterTransactionTrace } from './writer-tracing.ts'

type TxnProducer = Producer<Buffer, Buffer, Buffer, Buffer>
/** Not exported by name from @platformatic/kafka 2.12.1. */
type Transaction = Awaited<ReturnType<TxnProducer['beginTransaction']>>

/** As KafkaJS's transactionalProducerConfig had it: a sync or page writes for a while before committing. */
export const DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000

export interface TransactionalWriterOptions {
  /** Stable per writer role (poller feed, consents partition): a second writer with it fences the first. */
  transactionalId: string
  /** Broker-side limit of one transaction; default 60 s. */
  transactionTimeoutMs?: number
  logger?: KafkaLogger
}

/** What the work of `run` may do inside its transaction. */
export interface TransactionScope {
  /** Writes `messages` to `topic` as part of the transaction (in order; any size, chunked per partition). */
  send(topic: string, messages: readonly OutgoingMessage[]): Promise<void>
}

export interface TransactionalWriter {
  readonly transactionalId: string
  /** True once a newer producer with the same id took over: every later `run` fails with ProducerFencedError. */
  readonly fenced: boolean
  /**
   * InitProducerId: fences a previous producer with this id (its open
   * transaction is aborted, its later commits fail). `run` starts the writer
   * when this was not called; calling it first makes the takeover explicit.
   */
  start(): Promise<void>
  /** One transaction: committed when `work` resolves, aborted (and the error rethrown) when it throws. Runs one at a time. */
  run<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/**
 * Creates a transactional writer on @platformatic/kafka for producers that are
 * not a consume-transform-produce loop (the invalidation poller's items and
 * cursor, a consents partition's sync results). Keys are partitioned like the
 * Java client and KafkaJS did (compatibilityPartitioner).
 */
export function createTransactionalWriter(kafka: Kafka, options: TransactionalWriterOptions): TransactionalWriter {
  const logger = options.logger ?? kafka.logger
  return new Writer(requireConnection(kafka, 'createTransactionalWriter'), logger === undefined ? options : { ...options, logger })
}

class Writer implements TransactionalWriter {
  readonly transactionalId: string
  readonly #connection: KafkaConnection
  readonly #timeoutMs: number
  readonly #logger: KafkaLogger
  readonly #roundRobin = new Map<string, number>()
  #producer: TxnProducer | undefined
  #starting: Promise<TxnProducer> | undefined
  /**
   * After a failed send, abort or commit the producer's state is not to be
   * trusted: its sequence numbers ran ahead of what the broker has (the client
   * resets them only outside transactions), or the broker may still hold the
   * transaction open. The next run initialises again first, see #reinit.
   */
  #needsReinit = false
  /** Producer id and epoch of the last successful InitProducerId: what #reinit proves ownership with. */
  #ids: { producerId: bigint; producerEpoch: number } | undefined
  #fenced = false
  #closed = false
  #chain: Promise<unknown> = Promise.resolve()
  /** Only with a tracer provider installed; without one a transaction does no tracing work. */
  readonly #tracer: Tracer | undefined = installedTracer(KAFKA_TRACER)

  constructor(connection: KafkaConnection, options: TransactionalWriterOptions) {
    this.#connection = connection
    this.transactionalId = options.transactionalId
    this.#timeoutMs = options.transactionTimeoutMs ?? DEFAULT_TRANSACTION_TIMEOUT_MS
    this.#logger = options.logger ?? SILENT_LOGGER
  }

  get fenced(): boolean {
    return this.#fenced
  }

  async start(): Promise<void> {
    await this.#ready()
  }

  run<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T> {
    // A producer has one transaction open at a time: runs queue behind each other.
    const result = this.#chain.then(() => (this.#tracer === undefined ? this.#runOne(work, undefined) : this.#runTraced(work, this.#tracer)))
    this.#chain = result.catch(() => undefined)
    return result
  }

  /** Closes the client at once: a transaction still running fails, and is aborted by the broker (next owner or timeout). */
  async close(): Promise<void> {
    this.#closed = true
    const producer = this.#producer ?? (await this.#starting?.catch(() => undefined))
    this.#producer = undefined
    await this.#closeProducer(producer)
  }

  async #ready(): Promise<TxnProducer> {
    if (this.#closed) throw new ProducerClosedError(`transactional writer ${this.transactionalId}`)
    if (this.#fenced) throw new ProducerFencedError(this.transactionalId)
    if (this.#producer !== undefined && !this.#needsReinit) return this.#producer
    this.#starting ??= (this.#ids === undefined ? this.#init() : this.#reinit(this.#ids)).finally(() => {
      this.#starting = undefined
    })
    return this.#starting
  }

  /** The first InitProducerId of this writer: takes the id over from whoever had it. */
  async #init(): Promise<TxnProducer> {
    const producer = newTransactionalProducer(this.#connection, this.transactionalId, this.#timeoutMs)
    try {
      await initTransactions(producer)
    } catch (err) {
      await this.#closeProducer(producer)
      throw err
    }
    this.#adopt(producer)
    this.#logger.debug({ transactionalId: this.transactionalId }, 'transactional writer ready (previous producer fenced)')
    return producer
  }

  /**
   * InitProducerId again after a failure, WITH the producer id and epoch we
   * had (KIP-360): the coordinator aborts what we left open and bumps the epoch
   * only if we still own the id; if a newer producer took it over meanwhile, it
   * answers PRODUCER_FENCED instead. A fresh InitProducerId (-1/-1) would fence
   * that newer producer: a writer that lost its partition would steal it back.
   * The client re-initialises only its first transaction, so a new client.
   */
  async #reinit(ids: { producerId: bigint; producerEpoch: number }): Promise<TxnProducer> {
    const old = this.#producer
    this.#producer = undefined
    await this.#closeProducer(old)
    const producer = newTransactionalProducer(this.#connection, this.transactionalId, this.#timeoutMs)
    try {
      const probe = await producer.beginTransaction(ids)
      await probe.cancel()
    } catch (err) {
      await this.#closeProducer(producer)
      throw this.#fencedOr(err)
    }
    this.#adopt(producer)
    this.#logger.info({ transactionalId: this.transactionalId }, 'transactional writer initialised again after a failure')
    return producer
  }

  #adopt(producer: TxnProducer): void {
    if (this.#closed) {
      void this.#closeProducer(producer)
      throw new ProducerClosedError(`transactional writer ${this.transactionalId}`)
    }
    this.#producer = producer
    this.#needsReinit = false
    const { producerId, producerEpoch } = producer
    if (producerId !== undefined && producerEpoch !== undefined) this.#ids = { producerId, producerEpoch }
  }

  async #runTraced<T>(work: (tx: TransactionScope) => Promise<T>, tracer: Tracer): Promise<T> {
    const traced = new WriterTransactionTrace(tracer, this.transactionalId)
    try {
      const result = await this.#runOne(work, traced)
      traced.end()
      return result
    } catch (err) {
      traced.end(err)
      throw err
    }
  }

  async #runOne<T>(work: (tx: TransactionScope) => Promise<T>, traced: WriterTransactionTrace | undefined): Promise<T> {
    const producer = await this.#ready()
    let tx: Transaction
    try {
      tx = await producer.beginTransaction()
    } catch (err) {
      this.#needsReinit = true
      throw this.#fencedOr(err)
    }
    let sends: Promise<void> = Promise.resolve()
    let open = true
    let sendFailed = false
    const scope: TransactionScope = {
      send: (topic, messages) => {
        if (!open) return Promise.reject(new Error('send after the transaction ended'))
        const wire = toWireMessages(topic, traced === undefined ? messages : traced.traced(messages))
        // One send at a time, in call order: each output partition keeps the order of the calls.
        const next = sends.then(async () => {
          try {
            for (const chunk of await planSends(producer, wire, this.#roundRobin))
              await tx.send({ messages: chunk, partitioner: compatibilityPartitioner })
          } catch (err) {
            sendFailed = true
            throw err
          }
        })
        sends = next.catch(() => undefined)
        return next
      },
    }
    let result: T
    try {
      result = await work(scope)
      await sends
      if (sendFailed) throw new Error('a send of the transaction failed')
    } catch (err) {
      open = false
      await sends
      await this.#abort(tx, sendFailed)
      throw this.#fencedOr(err)
    }
    open = false
    try {
      if (traced === undefined) await tx.commit()
      else await traced.commit(() => tx.commit())
    } catch (err) {
      // Possibly committed (the answer was lost): the next run's InitProducerId settles it.
      this.#needsReinit = true
      await tx.cancel().catch(() => undefined)
      throw this.#fencedOr(err)
    }
    return result
  }

  async #abort(tx: Transaction, sendFailed: boolean): Promise<void> {
    if (sendFailed) this.#needsReinit = true
    try {
      await tx.abort()
    } catch (err) {
      if (isFencedError(err)) {
        this.#markFenced()
        return
      }
      this.#needsReinit = true
      await tx.cancel().catch(() => undefined)
      this.#logger.warn(
        { err, transactionalId: this.transactionalId },
        'aborting the transaction failed (it is aborted when the writer initialises again, or after the transaction timeout)',
      )
    }
  }

  /** A fencing error becomes ProducerFencedError (and the writer stays fenced); anything else passes through. */
  #fencedOr(err: unknown): unknown {
    if (!isFencedError(err)) return err
    this.#markFenced()
    return err instanceof ProducerFencedError ? err : new ProducerFencedError(this.transactionalId, err)
  }

  #markFenced(): void {
    if (this.#fenced) return
    this.#fenced = true
    const producer = this.#producer
    this.#producer = undefined
    void this.#closeProducer(producer)
  }

  async #closeProducer(producer: TxnProducer | undefined): Promise<void> {
    await producer
      ?.close(true)
      .catch((err: unknown) => this.#logger.warn({ err, transactionalId: this.transactionalId }, 'producer close failed'))
  }
}
