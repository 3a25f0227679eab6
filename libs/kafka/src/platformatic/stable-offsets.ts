import { offsetFetchV8, type Consumer } from '@platformatic/kafka'
import type { TopicPartition } from '../pipeline-types.ts'
import { bareConnection, type KafkaConnection } from './connection.ts'
import { liveGroupCoordinator } from './group-coordinator.ts'
import { hasProtocolError } from './protocol-errors.ts'

/** How often an UNSTABLE_OFFSET_COMMIT answer is asked again. */
const UNSTABLE_POLL_MS = 20

/**
 * The group's committed offsets of `partitions` as OffsetFetch answers with
 * `require_stable` (KIP-447): while a transaction holding offsets for one of them
 * is still open (or its markers are not written), the coordinator answers
 * UNSTABLE_OFFSET_COMMIT instead of the older offset, and we ask again. So the
 * answer includes every commit that can still happen: after an unknown-outcome
 * commit, or a partition moving away from an owner whose commit was in flight,
 * records below it are committed and must not be redone.
 * @platformatic/kafka's own committed-offset read (and the stream's start
 * position after a rebalance) does not set require_stable, hence this read.
 */
export async function readStableOffsets(
  consumer: Consumer,
  connection: KafkaConnection,
  partitions: TopicPartition[],
  signal: AbortSignal,
  onUnstable: () => void = () => {},
): Promise<Map<string, bigint | undefined>> {
  let told = false
  const byTopic = new Map<string, number[]>()
  for (const tp of partitions) byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp.partition])
  const topics = [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes }))
  for (;;) {
    signal.throwIfAborted()
    const broker = await liveGroupCoordinator(consumer, connection)
    const conn = bareConnection(`${connection.clientId}-stable-offsets`, connection)
    try {
      await conn.connect(broker.host, broker.port)
      const response = await offsetFetchV8.api.async(
        conn,
        [{ groupId: consumer.groupId, memberId: null, memberEpoch: -1, topics }],
        true,
      )
      const out = new Map<string, bigint | undefined>()
      for (const t of response.groups[0]?.topics ?? [])
        for (const p of t.partitions)
          out.set(`${t.name}:${p.partitionIndex}`, p.committedOffset < 0n ? undefined : p.committedOffset)
      return out
    } catch (err) {
      if (!hasProtocolError(err, 'UNSTABLE_OFFSET_COMMIT', 'COORDINATOR_LOAD_IN_PROGRESS', 'NOT_COORDINATOR'))
        throw err
      if (!told && hasProtocolError(err, 'UNSTABLE_OFFSET_COMMIT')) {
        told = true
        onUnstable()
      }
    } finally {
      await conn.close().catch(() => undefined)
    }
    await new Promise((resolve) => setTimeout(resolve, UNSTABLE_POLL_MS))
  }
}
