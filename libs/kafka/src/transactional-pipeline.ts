import { requireConnection } from './kafka-client.ts'
import { createPlatformaticPipeline } from './platformatic/eos-pipeline.ts'
import { validatePipelineOptions, type TransactionalPipelineOptions } from './pipeline-options.ts'
import type { TransactionalPipeline } from './pipeline-types.ts'

export type { TransactionalPipeline } from './pipeline-types.ts'

/**
 * A transactional consume-transform-produce loop (exactly-once within Kafka), on
 * @platformatic/kafka (libs/kafka/src/platformatic/eos-pipeline.ts).
 *
 * Records are transformed with bounded concurrency over all assigned partitions;
 * one transaction at a time writes the finished records' outputs (per partition
 * in input order) and DLQ records and commits their offsets (last + 1) with the
 * group generation (KIP-447). A read-committed reader therefore sees every
 * input's outputs exactly once, or nothing of an aborted attempt, which is redone.
 *
 * `options.kafka` must come from createKafka: the loop builds its own
 * @platformatic/kafka clients from that connection's brokers, client id and security.
 */
export function createTransactionalPipeline(options: TransactionalPipelineOptions): TransactionalPipeline {
  validatePipelineOptions(options)
  const connection = requireConnection(options.kafka, 'createTransactionalPipeline')
  return createPlatformaticPipeline(options, connection)
}

/** Starts a transactional pipeline and returns it running. */
export async function runTransactionalPipeline(
  options: TransactionalPipelineOptions,
): Promise<TransactionalPipeline> {
  const pipeline = createTransactionalPipeline(options)
  await pipeline.start()
  return pipeline
}
