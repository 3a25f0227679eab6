import type { PartitionState } from './partition-state.ts'
import type { PipelineContext } from './pipeline-context.ts'

/**
 * After a commit with an unknown outcome, how long the committed offset is read
 * again until it shows that commit. Fencing (InitProducerId) settles the outcome,
 * but Kafka's group coordinator applies a transaction's offsets to what
 * OffsetFetch answers only after the commit markers are written, and KafkaJS
 * 2.2.4 cannot ask for stable offsets only (KIP-447 require_stable). If the offset
 * does not get there, the commit was aborted and the records are redone.
 */
const UNCERTAIN_COMMIT_WAIT_MS = 3_000
const UNCERTAIN_COMMIT_POLL_MS = 50

/** The group's committed offset of the partition; `undefined` when none. */
export async function fetchCommitted(ctx: PipelineContext, ps: PartitionState): Promise<bigint | undefined> {
  const offsets = await ctx.admin!.fetchOffsets({ groupId: ctx.groupId, topics: [ps.topic] })
  const committed = offsets
    .find((t) => t.topic === ps.topic)
    ?.partitions.find((p) => p.partition === ps.partition)?.offset
  return committed === undefined || BigInt(committed) < 0n ? undefined : BigInt(committed)
}

/**
 * Reads the committed offset into `ps.floor`. After a commit with an unknown
 * outcome it reads again for a while until the offset shows that commit (see
 * UNCERTAIN_COMMIT_WAIT_MS); a redo of committed records would duplicate them.
 */
export async function refreshFloor(ctx: PipelineContext, ps: PartitionState): Promise<void> {
  const uncertain = ps.uncertainNext
  const deadline = Date.now() + UNCERTAIN_COMMIT_WAIT_MS
  let floor = await fetchCommitted(ctx, ps)
  while (
    uncertain !== undefined &&
    (floor === undefined || floor < uncertain) &&
    Date.now() < deadline &&
    ctx.state === 'running'
  ) {
    await new Promise((resolve) => setTimeout(resolve, UNCERTAIN_COMMIT_POLL_MS))
    floor = await fetchCommitted(ctx, ps)
  }
  if (uncertain !== undefined)
    ctx.logger.info(
      {
        topic: ps.topic,
        partition: ps.partition,
        uncertain: uncertain.toString(),
        committed: floor?.toString(),
        outcome: floor !== undefined && floor >= uncertain ? 'committed' : 'aborted',
      },
      'outcome of the commit whose answer was lost',
    )
  ps.floor = floor
  ps.recheckFloor = false
  ps.uncertainNext = undefined
}
