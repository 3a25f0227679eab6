import { findCoordinatorV6, type Consumer } from '@platformatic/kafka'
import { bareConnection, type KafkaConnection } from './connection.ts'

/** FindCoordinator's key type for a consumer group. */
const GROUP = 0

export interface CoordinatorBroker {
  nodeId: number
  host: string
  port: number
}

/**
 * The broker coordinating the consumer's group, one that is in the cluster metadata.
 *
 * The consumer caches its coordinator's id and forgets it only on some heartbeat errors: after
 * the coordinator's broker was killed, it named the dead broker for 30 s and more (until the
 * broker came back) in the three-broker suite's broker-lost row, while the group had long moved
 * to a live one. The loop's own requests to the coordinator (the stable offset read, the
 * transaction's offsets) then failed the whole time. So when the cached id has left the
 * metadata, FindCoordinator is asked directly, of each live broker in turn, and the first
 * answer naming a live broker wins. Throws when none does (an election in progress: the caller
 * retries).
 */
export async function liveGroupCoordinator(
  consumer: Pick<Consumer, 'groupId' | 'findGroupCoordinator' | 'metadata'>,
  connection: KafkaConnection,
  ask: AskCoordinator = findCoordinatorOn(connection),
): Promise<CoordinatorBroker> {
  const cached = await consumer.findGroupCoordinator()
  const metadata = await consumer.metadata({ topics: [] })
  const known = metadata.brokers.get(cached)
  if (known !== undefined) return { nodeId: cached, host: known.host, port: known.port }
  const reasons: string[] = []
  for (const [nodeId, broker] of metadata.brokers) {
    try {
      const named = await ask(broker, consumer.groupId)
      const live = named === undefined ? undefined : metadata.brokers.get(named)
      if (named !== undefined && live !== undefined) return { nodeId: named, host: live.host, port: live.port }
      reasons.push(`broker ${nodeId} named ${named ?? 'none'}`)
    } catch (err) {
      reasons.push(`broker ${nodeId}: ${(err as Error).message}`)
    }
  }
  throw new Error(`group coordinator ${cached} is not in the cluster metadata, and no live broker named another (${reasons.join('; ')})`)
}

/** Asks one broker which node coordinates `groupId` (undefined: it named none). */
export type AskCoordinator = (broker: { host: string; port: number }, groupId: string) => Promise<number | undefined>

/** FindCoordinator (v6) on a connection of its own to the broker. */
function findCoordinatorOn(connection: KafkaConnection): AskCoordinator {
  return async (broker, groupId) => {
    const conn = bareConnection(`${connection.clientId}-find-coordinator`, connection)
    try {
      await conn.connect(broker.host, broker.port)
      const answer = await findCoordinatorV6.api.async(conn, GROUP, [groupId])
      return answer.coordinators.find((c) => c.key === groupId)?.nodeId
    } finally {
      await conn.close().catch(() => undefined)
    }
  }
}
