import type { Message, Producer, RecordMetadata, Transaction } from 'kafkajs'
import { SILENT_LOGGER, type KafkaLogger } from './logger.ts'

/** What the callback of `withTransaction` may do inside the transaction. */
export interface TransactionScope {
  /** Sends records to `topic` as part of the transaction. */
  send(topic: string, messages: Message[]): Promise<RecordMetadata[]>
  /** Commits consumer offsets with the transaction (consume-transform-produce). */
  sendOffsets(args: Parameters<Transaction['sendOffsets']>[0]): Promise<void>
}

/**
 * Runs `work` inside one Kafka transaction of `producer` (a transactional
 * producer, e.g. `kafka.producer(transactionalProducerConfig(id))`, connected):
 * commits when `work` resolves, aborts and rethrows when it throws, so a
 * non-consumer producer (the invalidation poller writing items and its cursor)
 * gets all-or-nothing without repeating the try/abort dance.
 */
export async function withTransaction<T>(
  producer: Producer,
  work: (tx: TransactionScope) => Promise<T>,
  logger: KafkaLogger = SILENT_LOGGER,
): Promise<T> {
  const tx = await producer.transaction()
  let result: T
  try {
    result = await work({
      send: (topic, messages) => tx.send({ topic, messages }),
      sendOffsets: (args) => tx.sendOffsets(args),
    })
  } catch (err) {
    await tx
      .abort()
      .catch((abortErr: unknown) =>
        logger.warn(
          { err: abortErr },
          'aborting the transaction failed (the broker aborts it on timeout or when the id is re-initialised)',
        ),
      )
    throw err
  }
  await tx.commit()
  return result
}
