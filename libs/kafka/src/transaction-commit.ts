import { errorCode } from '@tep/errors'
import type { EachBatchPayload, Message, Producer, TopicMessages } from 'kafkajs'
import { createDlqRecord } from './dlq-record.ts'
import { PipelineStoppedError } from './errors.ts'
import type { PartitionState } from './partition-state.ts'
import type { PipelineContext } from './pipeline-context.ts'
import type { OutputRecord, PipelineRecord } from './pipeline-types.ts'

/** What became of one input record: outputs to write, or a DLQ record. */
export type Outcome =
  | { kind: 'outputs'; record: PipelineRecord; outputs: OutputRecord[] }
  | { kind: 'dead-letter'; record: PipelineRecord; error: unknown }

export function nextOffset(offset: string): string {
  return (BigInt(offset) + 1n).toString()
}

function toKafkaMessage(output: OutputRecord): Message {
  const message: Message = { key: output.key, value: output.value }
  if (output.headers !== undefined) message.headers = output.headers
  if (output.partition !== undefined) message.partition = output.partition
  return message
}

/** Groups messages per topic, keeping their order (KafkaJS keeps per-partition order within a topic's list). */
function groupByTopic(records: { topic: string; message: Message }[]): TopicMessages[] {
  const byTopic = new Map<string, Message[]>()
  for (const { topic, message } of records) {
    let list = byTopic.get(topic)
    if (list === undefined) {
      list = []
      byTopic.set(topic, list)
    }
    list.push(message)
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }))
}

/**
 * ONE Kafka transaction for the outcomes of consecutive records of a partition:
 * their outputs and DLQ records in input order, and the consumer offset (last + 1).
 * Throws when the transaction did not commit (it is aborted, nothing of it is
 * visible); when EndTxn went out but its answer was lost, `ps.uncertainNext`
 * records what it may have committed.
 */
export async function commitOutcomes(
  ctx: PipelineContext,
  ps: PartitionState,
  producer: Producer,
  outcomes: Outcome[],
  payload: EachBatchPayload,
  started: number,
): Promise<void> {
  const { groupId, logger } = ctx
  const writes: { topic: string; message: Message }[] = []
  let outputs = 0
  const deadLettered: { record: PipelineRecord; code: string; message: string }[] = []
  for (const outcome of outcomes) {
    if (outcome.kind === 'outputs') {
      for (const out of outcome.outputs) writes.push({ topic: out.topic, message: toKafkaMessage(out) })
      outputs += outcome.outputs.length
    } else {
      const { record, error } = outcome
      const dlq = createDlqRecord(ctx.dlqTopic, record, {
        error,
        attempts: ps.failures + 1,
        consumerGroup: groupId,
      })
      writes.push({ topic: dlq.topic, message: { key: dlq.key, value: dlq.value, headers: dlq.headers } })
      deadLettered.push({
        record,
        code: errorCode(error),
        message: error instanceof Error ? error.message : String(error),
      })
    }
  }
  const first = outcomes[0]!.record
  const last = outcomes[outcomes.length - 1]!.record
  const tx = await producer.transaction()
  let endTxnSent = false
  try {
    if (writes.length > 0) await tx.sendBatch({ topicMessages: groupByTopic(writes) })
    await tx.sendOffsets({
      consumerGroupId: groupId,
      topics: [
        { topic: ps.topic, partitions: [{ partition: ps.partition, offset: nextOffset(last.offset) }] },
      ],
    })
    if (payload.isStale())
      throw new PipelineStoppedError(
        `partition ${ps.topic}/${ps.partition} was sought or revoked during the batch`,
      )
    endTxnSent = true
    await tx.commit()
  } catch (err) {
    // A commit that failed after EndTxn went out may have happened all the same.
    if (endTxnSent) ps.uncertainNext = BigInt(nextOffset(last.offset))
    await tx.abort().catch(() => undefined)
    throw err
  }
  payload.resolveOffset(last.offset)
  // Healthy again: clear the failure state before any hook observes status().
  ps.failures = 0
  ps.pausedSince = undefined
  ps.pausedCode = ''
  for (const d of deadLettered) {
    logger.warn(
      { topic: ps.topic, partition: ps.partition, offset: d.record.offset, code: d.code, error: d.message },
      'record sent to the DLQ',
    )
    ctx.emit('onDeadLettered', {
      topic: ps.topic,
      partition: ps.partition,
      offset: d.record.offset,
      code: d.code,
      message: d.message,
    })
  }
  ctx.emit('onCommitted', {
    topic: ps.topic,
    partition: ps.partition,
    records: outcomes.length,
    outputs,
    deadLettered: deadLettered.length,
    firstOffset: first.offset,
    lastOffset: last.offset,
    durationMs: Date.now() - started,
  })
}
