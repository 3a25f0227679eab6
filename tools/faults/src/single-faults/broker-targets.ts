import type { FaultSystem } from '../system.ts'

/**
 * The broker that matters most at the moment of a fault, found with Metadata and
 * FindCoordinator (`cluster-probe.ts`): the leader of most raw partitions, or the
 * coordinator of the ingest's transactional id or consumer group.
 */

/** The ingest's transactional id in the fault system (prefix + stable instance id). */
export const INGEST_TRANSACTIONAL_ID = 'transaction-ingest-transaction-ingest-0'
export const INGEST_GROUP = 'transaction-ingest'
export const RAW_TOPIC = 'transactions.raw.v1'

export type BrokerRole = 'leader' | 'txn-coordinator' | 'group-coordinator'

export interface BrokerTarget {
  nodeId: number
  /** In words, for the log: "leader of 4/6 raw partitions". */
  why: string
}

export async function findBroker(system: FaultSystem, role: BrokerRole): Promise<BrokerTarget> {
  if (role === 'leader') {
    const l = await system.probe.leaderOfMostPartitions(RAW_TOPIC)
    return { nodeId: l.nodeId, why: `leader of ${l.partitions}/${l.of} raw partitions` }
  }
  const kind = role === 'txn-coordinator' ? 'transaction' : 'group'
  const key = role === 'txn-coordinator' ? INGEST_TRANSACTIONAL_ID : INGEST_GROUP
  return { nodeId: await system.probe.coordinatorOf(kind, key), why: `${kind} coordinator of ${key}` }
}
