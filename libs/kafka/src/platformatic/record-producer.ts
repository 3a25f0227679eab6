import { requireConnection } from '../kafka-client.ts'
import { compatibilityPartitioner, Producer } from '@platformatic/kafka'
import type { Kafka } from '../kafka-client.ts'
import { ProducerClosedError } from '../errors.ts'
import { SILENT_LOGGER, type KafkaLogger } from '../logger.ts'
import { baseOptions } from './connection.ts'
import { planSends, toWireMessages, type OutgoingMessage } from './send-plan.ts'

export interface RecordProducerOptions {
  logger?: KafkaLogger
}

/** Plain (non-transactional) writes: the refresher's sweeps and re-enrichments, the consent gateway. */
export interface RecordProducer {
  /**
   * Writes `messages` to `topic`, in order, acknowledged by all in-sync
   * replicas; resolves once every record is written. Any number of records:
   * split into sends of at most ~512 KB per partition.
   */
  send(topic: string, messages: readonly OutgoingMessage[]): Promise<void>
  close(): Promise<void>
}

/**
 * An idempotent @platformatic/kafka producer (acks all; a retried request never
 * writes a record twice) with the Java client's partitioner, so a key lands in
 * the partition KafkaJS and Java clients put it in.
 */
export function createRecordProducer(kafka: Kafka, options: RecordProducerOptions = {}): RecordProducer {
  const logger = options.logger ?? kafka.logger ?? SILENT_LOGGER
  const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
    ...baseOptions(requireConnection(kafka, 'createRecordProducer'), '-producer'),
    idempotent: true,
    acks: -1,
  })
  const roundRobin = new Map<string, number>()
  let closed = false
  // Sends one after the other: a later call's records stay behind an earlier
  // call's in every partition, also when a request is retried.
  let chain: Promise<unknown> = Promise.resolve()
  return {
    send(topic, messages) {
      if (closed) return Promise.reject(new ProducerClosedError('record producer'))
      const wire = toWireMessages(topic, messages)
      const result = chain.then(async () => {
        for (const chunk of await planSends(producer, wire, roundRobin))
          await producer.send({ messages: chunk, partitioner: compatibilityPartitioner })
      })
      chain = result.catch(() => undefined)
      return result
    },
    async close() {
      if (closed) return
      closed = true
      await chain
      await producer.close().catch((err: unknown) => logger.warn({ err }, 'producer close failed'))
    },
  }
}
