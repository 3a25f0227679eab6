import type { EachBatchPayload, KafkaMessage, Producer } from 'kafkajs'
import { PipelineStoppedError } from './errors.ts'
import { mapInOrder, SKIPPED, type Settled } from './ordered-map.ts'
import { pauseAndBackOff } from './partition-backoff.ts'
import type { PartitionState } from './partition-state.ts'
import type { PipelineContext } from './pipeline-context.ts'
import { isRecordFailure } from './pipeline-options.ts'
import type { OutputRecord, PipelineRecord } from './pipeline-types.ts'
import { closeProducer, ensureProducer } from './producer-fencing.ts'
import { commitOutcomes, type Outcome } from './transaction-commit.ts'

function toRecord(topic: string, partition: number, message: KafkaMessage): PipelineRecord {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key ?? null,
    value: message.value ?? null,
    headers: message.headers ?? {},
    timestamp: message.timestamp,
  }
}

/**
 * Transforms one chunk of a partition's batch (at most `concurrency` records at
 * a time, outcomes in input order) and commits the outcomes up to the first
 * systemic failure in one transaction. On a failure the partition is paused and
 * will redo from the first record not committed.
 */
async function processChunk(
  ctx: PipelineContext,
  ps: PartitionState,
  producer: Producer,
  records: PipelineRecord[],
  payload: EachBatchPayload,
): Promise<'done' | 'failed'> {
  const { logger } = ctx
  const started = Date.now()
  let systemic = false
  const heartbeat = setInterval(() => {
    payload
      .heartbeat()
      .catch((err: unknown) => logger.debug({ err }, 'heartbeat during batch failed (rebalance pending)'))
  }, 1_000)
  let settled: Settled<OutputRecord[] | OutputRecord | undefined | void>[]
  try {
    settled = await mapInOrder(
      records,
      ctx.concurrency,
      async (record) => {
        try {
          return await ctx.transform(record, { attempt: ps.failures + 1, signal: ctx.stopController.signal })
        } catch (error) {
          // Stop starting new records at the first systemic failure: they would be redone anyway.
          if (!isRecordFailure(error)) systemic = true
          throw error
        }
      },
      () => !systemic && ctx.state === 'running',
    )
  } finally {
    clearInterval(heartbeat)
  }
  // Outcomes in input order, up to (not including) the first systemic failure.
  const outcomes: Outcome[] = []
  let failure: { index: number; error: unknown } | undefined
  for (let i = 0; i < settled.length; i++) {
    const s = settled[i]!
    const record = records[i]!
    if (s.ok) {
      const v = s.value
      outcomes.push({ kind: 'outputs', record, outputs: v === undefined ? [] : Array.isArray(v) ? v : [v] })
    } else if (s.error !== SKIPPED && isRecordFailure(s.error)) {
      outcomes.push({ kind: 'dead-letter', record, error: s.error })
    } else {
      failure = {
        index: i,
        error: s.error === SKIPPED ? new PipelineStoppedError('pipeline is stopping') : s.error,
      }
      break
    }
  }
  if (outcomes.length > 0) {
    try {
      await commitOutcomes(ctx, ps, producer, outcomes, payload, started)
    } catch (error) {
      // The transaction is aborted: nothing of it is visible. Start over with a
      // new producer (a failed one may be fenced or in an unknown state).
      ctx.emit('onAborted', { topic: ps.topic, partition: ps.partition, reason: 'commit failed', error })
      await closeProducer(ctx, ps)
      if (ctx.state !== 'running' || payload.isStale()) return 'failed'
      pauseAndBackOff(ctx, ps, payload, records[0]!.offset, error)
      return 'failed'
    }
  }
  if (failure !== undefined) {
    if (ctx.state !== 'running') return 'failed'
    pauseAndBackOff(ctx, ps, payload, records[failure.index]!.offset, failure.error)
    return 'failed'
  }
  return 'done'
}

/**
 * The KafkaJS `eachBatch` of the pipeline: one batch of one input partition.
 * Makes sure the partition has a fenced producer of the current generation,
 * skips records already committed (below `ps.floor`), then processes the rest in
 * chunks of `maxRecordsPerTransaction`, stopping at the first failed chunk.
 */
export async function eachBatch(ctx: PipelineContext, payload: EachBatchPayload): Promise<void> {
  const { batch } = payload
  const ps = ctx.partitionState(batch.topic, batch.partition)
  if (ctx.state !== 'running' || payload.isStale() || batch.messages.length === 0) return
  let producer: Producer
  try {
    producer = await ensureProducer(ctx, ps)
  } catch (error) {
    await closeProducer(ctx, ps)
    if (ctx.state === 'running' && !payload.isStale())
      pauseAndBackOff(ctx, ps, payload, batch.messages[0]!.offset, error)
    return
  }
  let records = batch.messages.map((m) => toRecord(batch.topic, batch.partition, m))
  if (ps.floor !== undefined) {
    const floor = ps.floor
    const skipped = records.filter((r) => BigInt(r.offset) < floor)
    if (skipped.length > 0) {
      // Committed by an earlier attempt whose answer was lost, or by a previous
      // owner after this instance fetched its start offset.
      ctx.logger.info(
        { topic: ps.topic, partition: ps.partition, skipped: skipped.length, committed: floor.toString() },
        'skipping records that are already committed',
      )
      payload.resolveOffset(skipped[skipped.length - 1]!.offset)
      records = records.filter((r) => BigInt(r.offset) >= floor)
    }
    // Kept while the whole batch lay below it: the next batch may too.
    if (records.length > 0) ps.floor = undefined
  }
  for (let i = 0; i < records.length; i += ctx.maxPerTxn) {
    if (ctx.state !== 'running' || payload.isStale()) return
    const result = await processChunk(ctx, ps, producer, records.slice(i, i + ctx.maxPerTxn), payload)
    if (result === 'failed' || ps.producer === undefined) return
  }
}
