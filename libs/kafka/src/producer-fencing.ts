import type { Producer } from 'kafkajs'
import { refreshFloor } from './committed-offset.ts'
import { transactionalProducerConfig } from './kafka-client.ts'
import type { PartitionState } from './partition-state.ts'
import type { PipelineContext } from './pipeline-context.ts'

/**
 * KafkaJS answers CONCURRENT_TRANSACTIONS (the previous EndTxn's markers are still
 * being written) by retrying after its default 300 ms; starting at 5 ms keeps
 * back-to-back transactions of one partition a few ms apart (measured on the dev
 * broker: about 11 ms per small transaction instead of about 30 ms at 20 ms).
 * The delays double up to 5 s and give up after about 30 s in all, so a dead
 * broker surfaces as a systemic failure instead of hanging the batch.
 */
const PRODUCER_RETRY = { initialRetryTime: 5, maxRetryTime: 5_000, retries: 15 }

export async function closeProducer(ctx: PipelineContext, ps: PartitionState): Promise<void> {
  const producer = ps.producer
  ps.producer = undefined
  ps.producerGeneration = -1
  if (producer !== undefined) {
    // A transaction left open is aborted by the broker when the next owner
    // initialises the same transactional id, or after transactionTimeout.
    await producer
      .disconnect()
      .catch((err: unknown) =>
        ctx.logger.warn({ err, transactionalId: ps.transactionalId }, 'producer disconnect failed'),
      )
  }
}

/**
 * Producer of the partition for the current generation. A new one fences the
 * previous owner first, and only then is the committed offset read (`ps.floor`),
 * so a zombie's last commit is seen. The offset is read again after any failure.
 */
export async function ensureProducer(ctx: PipelineContext, ps: PartitionState): Promise<Producer> {
  if (ps.producer !== undefined && ps.producerGeneration === ctx.generation) {
    if (ps.recheckFloor || ps.uncertainNext !== undefined) await refreshFloor(ctx, ps)
    return ps.producer
  }
  if (ps.producer !== undefined) await closeProducer(ctx, ps)
  const producer = ctx.kafka.producer(
    transactionalProducerConfig(ps.transactionalId, {
      transactionTimeout: ctx.transactionTimeout,
      retry: PRODUCER_RETRY,
    }),
  )
  // Owned by the partition before connecting, so a failure below still closes it.
  ps.producer = producer
  ps.producerGeneration = ctx.generation
  await producer.connect()
  // Fence: the first transaction() runs InitProducerId for this transactional id.
  const probe = await producer.transaction()
  await probe.abort()
  await refreshFloor(ctx, ps)
  ctx.logger.debug(
    { transactionalId: ps.transactionalId, committed: ps.floor?.toString() },
    'transactional producer ready (previous owner fenced)',
  )
  return producer
}
