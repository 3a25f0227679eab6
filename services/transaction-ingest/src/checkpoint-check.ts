import type { ClusterTopics } from '@tep/kafka'
import type { CheckpointHeader } from './table-checkpoint.ts'

export interface CheckpointExpectations {
  shopsTopic: string
  merchantsTopic: string
  /** The tables' encoding fingerprint of this code version (tablesLayout()). */
  layout: string
  /** The topics now, from describeTopics. */
  cluster: ClusterTopics
  now: number
  /**
   * Older checkpoints are refused: compaction removes a tombstone
   * delete.retention.ms (default 24 h) after cleaning, so a replay from an old
   * position could miss a deletion.
   */
  maxAgeMs: number
}

/**
 * Why the checkpoint described by `header` must not be used, or undefined when
 * it describes the topics as they are now: same topics (names and ids, so not
 * recreated), same cluster, same table encoding, recent enough, and every
 * position within its partition's log (not past the end, not below the start).
 */
export function checkpointMismatch(header: CheckpointHeader, expected: CheckpointExpectations): string | undefined {
  const { shops, merchants } = header.topics
  if (shops.name !== expected.shopsTopic || merchants.name !== expected.merchantsTopic)
    return `it is of the topics ${shops.name} and ${merchants.name}, this instance reads ${expected.shopsTopic} and ${expected.merchantsTopic}`
  if (header.layout !== expected.layout)
    return `its tables were encoded for other schemas or options (layout ${header.layout.slice(0, 12)}, this version ${expected.layout.slice(0, 12)})`
  const age = expected.now - header.writtenAt
  if (age > expected.maxAgeMs)
    return `it is ${Math.round(age / 60_000)} min old, above the ${Math.round(expected.maxAgeMs / 60_000)} min allowed (compaction may have removed tombstones since)`
  if (header.clusterId !== expected.cluster.clusterId)
    return `it was written against cluster ${header.clusterId}, this is cluster ${expected.cluster.clusterId}`
  for (const topic of [shops, merchants]) {
    const now = expected.cluster.topics.get(topic.name)
    if (now === undefined) return `topic ${topic.name} does not exist any more`
    if (now.id !== topic.id) return `topic ${topic.name} was recreated (id ${topic.id}, now ${now.id})`
  }
  for (const [key, raw] of Object.entries(header.positions)) {
    const colon = key.lastIndexOf(':')
    const name = key.slice(0, colon)
    const partition = Number(key.slice(colon + 1))
    const topic = expected.cluster.topics.get(name)
    if (topic === undefined || (name !== shops.name && name !== merchants.name))
      return `it holds a position of ${key}, not a partition of its topics`
    const range = topic.partitions[partition]
    if (range === undefined) return `partition ${key} does not exist any more`
    let offset: bigint
    try {
      offset = BigInt(raw)
    } catch {
      return `its position of ${key} is not an offset: ${raw}`
    }
    if (offset > range.high)
      return `its offset ${offset} of ${key} is past the end of the log (${range.high}): the topic was truncated or recreated`
    if (offset < range.low)
      return `its offset ${offset} of ${key} is below the log start (${range.low}): records it did not see were deleted`
  }
  return undefined
}
