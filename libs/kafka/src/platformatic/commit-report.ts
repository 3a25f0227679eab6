import type { KafkaLogger } from '../logger.ts'
import type { DeadLettered } from './eos-transaction.ts'
import type { HookEmitter } from './hook-emitter.ts'
import { markCommitted, type Taken } from './partition-state.ts'

/**
 * After a transaction committed: each partition's committed position moves on,
 * every dead letter is logged and reported, and `onCommitted` tells what the
 * transaction held per partition.
 */
export function reportCommitted(
  live: Taken[],
  deadLettered: Map<Taken, DeadLettered[]>,
  startedAt: number,
  emit: HookEmitter,
  logger: KafkaLogger,
): void {
  for (const t of live) {
    const s = t.state
    markCommitted(s, t.done[t.done.length - 1]!.message.offset)
    const dl = deadLettered.get(t) ?? []
    for (const d of dl) {
      logger.warn({ topic: s.topic, partition: s.partition, offset: d.record.offset, code: d.code, error: d.message }, 'record sent to the DLQ')
      emit('onDeadLettered', { topic: s.topic, partition: s.partition, offset: d.record.offset, code: d.code, message: d.message, maskedPans: d.maskedPans })
    }
    const outputs = t.done.reduce((n, d) => n + (d.outcome.kind === 'outputs' ? d.outcome.outputs.length : 0), 0)
    emit('onCommitted', {
      topic: s.topic,
      partition: s.partition,
      records: t.done.length,
      outputs,
      deadLettered: dl.length,
      firstOffset: t.done[0]!.outcome.record.offset,
      lastOffset: t.done[t.done.length - 1]!.outcome.record.offset,
      durationMs: Date.now() - startedAt,
    })
  }
}
