import { PipelineError, errorCode } from '@tep/errors'
import type { EachBatchPayload } from 'kafkajs'
import type { PartitionState } from './partition-state.ts'
import type { PipelineContext } from './pipeline-context.ts'
import { backoffDelay } from './retry-policy.ts'

/**
 * After a systemic failure: seek the partition back to `fromOffset` (the first
 * record whose outcome was not committed), pause it, and resume it after the
 * retry policy's backoff (a `details.retryAfterMs` of the error is its floor).
 */
export function pauseAndBackOff(
  ctx: PipelineContext,
  ps: PartitionState,
  payload: EachBatchPayload,
  fromOffset: string,
  error: unknown,
): void {
  const { logger } = ctx
  ps.failures += 1
  const code = errorCode(error)
  const retryAfterMs =
    error instanceof PipelineError && typeof error.details.retryAfterMs === 'number'
      ? error.details.retryAfterMs
      : undefined
  const delayMs = backoffDelay(ctx.policy, ps.failures, ctx.random, retryAfterMs)
  const tp = { topic: ps.topic, partition: ps.partition }
  // Re-read from the first record whose outcome was not committed, and read the
  // committed offset again before redoing anything.
  ctx.consumer!.seek({ ...tp, offset: fromOffset })
  ps.recheckFloor = true
  payload.pause()
  ps.pausedSince ??= Date.now()
  ps.pausedCode = code
  if (ps.resumeTimer !== undefined) clearTimeout(ps.resumeTimer)
  ps.resumeTimer = setTimeout(() => {
    ps.resumeTimer = undefined
    if (ctx.state !== 'running') return
    ctx.consumer?.resume([{ topic: ps.topic, partitions: [ps.partition] }])
    ctx.emit('onResumed', { ...tp, attempt: ps.failures })
    logger.info({ ...tp, attempt: ps.failures }, 'partition resumed after backoff')
  }, delayMs)
  ps.resumeTimer.unref?.()
  logger.warn(
    { ...tp, offset: fromOffset, code, attempt: ps.failures, delayMs, err: error },
    'systemic failure: partition paused, will redo',
  )
  ctx.emit('onPaused', { ...tp, offset: fromOffset, error, code, attempt: ps.failures, delayMs })
}

/** Forgets a partition's backoff and resumes it if it was paused. */
export function clearPause(ctx: PipelineContext, ps: PartitionState): void {
  if (ps.resumeTimer !== undefined) clearTimeout(ps.resumeTimer)
  ps.resumeTimer = undefined
  if (ps.pausedSince !== undefined) {
    ps.pausedSince = undefined
    ctx.consumer?.resume([{ topic: ps.topic, partitions: [ps.partition] }])
  }
}
