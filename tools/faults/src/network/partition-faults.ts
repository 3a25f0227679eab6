import { rawLeader } from '../broker-faults.ts'
import type { InjectContext } from '../inject-context.ts'
import type { SingleFault, SingleFaultOutcome } from '../single-fault.ts'
import type { ClusterNetwork } from './cluster-network.ts'

/**
 * Network partitions of the three-broker cluster, each made once with iptables
 * rules inside the parties' network namespaces (cluster-network.ts), kept for a
 * set time, and healed: what the partition rows (partition-scenarios.ts) run
 * under full traffic, and what the chaos soak draws. Each is over once the rules
 * are gone (`healedAt`) and every partition has its full ISR again.
 *
 * The services are the parties `transaction-ingest`, `refresher` and
 * `invalidation-poller` (own namespaces); bank-sync, the simulators, the traffic
 * and the checker are in the root namespace, reached at `rootAddress`: "the
 * clients" of a broker are all of those.
 */

/** How long each partition is kept, full and `--quick`. */
export const PARTITION_HOLD_MS = {
  'partition-leader-from-quorum': { full: 30_000, quick: 20_000 },
  'partition-broker-from-clients': { full: 30_000, quick: 20_000 },
  'partition-service-from-cluster': { full: 90_000, quick: 40_000 },
  'partition-bridge': { full: 60_000, quick: 25_000 },
  'lossy-link': { full: 120_000, quick: 40_000 },
} as const

export type PartitionFaultName = keyof typeof PARTITION_HOLD_MS

/** Share of packets the lossy link drops, each way (the issue asks for 20-30 %). */
export const LOSSY_LINK_PROBABILITY = 0.25

/** The namespaced services (bank-sync stays in the root namespace, see system.ts). */
export const NAMESPACED_SERVICES = ['transaction-ingest', 'refresher', 'invalidation-poller'] as const

export const brokerParty = (nodeId: number) => `kafka-${nodeId}`

function networkOf(ctx: InjectContext): ClusterNetwork {
  const network = ctx.system.network
  if (network === undefined)
    throw new Error('this partition needs the cluster network (root, iproute2 and iptables; npm run faults -- --brokers 3)')
  return network
}

function brokerIds(ctx: InjectContext): number[] {
  return Array.from({ length: ctx.system.brokerCount }, (_, i) => i + 1)
}

/** Every client of the brokers: the root namespace and each namespaced service. */
function clientAddresses(network: ClusterNetwork): string[] {
  return [network.rootAddress, ...NAMESPACED_SERVICES.filter((s) => network.has(s)).map((s) => network.host(s).address)]
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)))

/**
 * Installs `cut` (party and peers), keeps it `holdMs`, heals it (also when the
 * wait is interrupted), then waits for the full ISR.
 */
async function holdPartition(ctx: InjectContext, name: PartitionFaultName, cuts: Array<{ party: string; peers: string[]; lossProbability?: number }>, what: string): Promise<SingleFaultOutcome> {
  const network = networkOf(ctx)
  const holdMs = ctx.quick ? PARTITION_HOLD_MS[name].quick : PARTITION_HOLD_MS[name].full
  ctx.say(`  ${name}: ${what}, for ${holdMs / 1000} s`)
  const startedAt = Date.now()
  let healedAt: number
  try {
    for (const cut of cuts) network.rules(cut.party).cut(cut.peers, cut.lossProbability === undefined ? {} : { lossProbability: cut.lossProbability })
    await sleep(holdMs)
  } finally {
    for (const cut of cuts) network.rules(cut.party).heal()
    healedAt = Date.now()
  }
  const isrMs = await ctx.system.probe.waitFullIsr()
  ctx.say(`  ${name}: healed; full ISR ${(isrMs / 1000).toFixed(1)} s later`)
  return { startedAt, healedAt, description: `${what}, ${holdMs / 1000} s; full ISR ${(isrMs / 1000).toFixed(1)} s after the heal` }
}

/** The leader of most raw partitions cut off from the other brokers (and controllers), still reachable by every client: a zombie leader. */
const leaderFromQuorum: SingleFault = {
  name: 'partition-leader-from-quorum',
  topology: 'cluster',
  async inject(ctx) {
    const network = networkOf(ctx)
    const leader = await rawLeader(ctx)
    const others = brokerIds(ctx).filter((n) => n !== leader.nodeId)
    return holdPartition(ctx, 'partition-leader-from-quorum', [{ party: brokerParty(leader.nodeId), peers: others.map((n) => network.host(brokerParty(n)).address) }], `broker ${leader.nodeId} (${leader.why}) cut off from brokers/controllers ${others.join(', ')}, clients still reach it`)
  },
}

/** The leader of most raw partitions cut off from every client, still in the cluster (leadership does not move). */
const brokerFromClients: SingleFault = {
  name: 'partition-broker-from-clients',
  topology: 'cluster',
  async inject(ctx) {
    const network = networkOf(ctx)
    const broker = await rawLeader(ctx)
    return holdPartition(ctx, 'partition-broker-from-clients', [{ party: brokerParty(broker.nodeId), peers: clientAddresses(network) }], `broker ${broker.nodeId} (${broker.why}) cut off from every client (services, traffic, checker), still in the cluster`)
  },
}

/** The ingest cut off from every broker, with its transaction open (it always has one under traffic). */
const serviceFromCluster: SingleFault = {
  name: 'partition-service-from-cluster',
  topology: 'cluster',
  async inject(ctx) {
    const network = networkOf(ctx)
    const brokers = brokerIds(ctx).map((n) => network.host(brokerParty(n)).address)
    return holdPartition(ctx, 'partition-service-from-cluster', [{ party: 'transaction-ingest', peers: brokers }], 'transaction-ingest cut off from every broker with its transaction open')
  },
}

/**
 * A majority/minority split with a bridge: the raw topic's main leader and
 * another node no longer see each other, the third sees both (Jepsen's
 * "bridge"). Clients see everyone.
 */
const bridgeSplit: SingleFault = {
  name: 'partition-bridge',
  topology: 'cluster',
  async inject(ctx) {
    const network = networkOf(ctx)
    const leader = await rawLeader(ctx)
    const others = brokerIds(ctx).filter((n) => n !== leader.nodeId)
    const [away, bridge] = [others[0]!, others[1]!]
    return holdPartition(ctx, 'partition-bridge', [{ party: brokerParty(leader.nodeId), peers: [network.host(brokerParty(away)).address] }], `brokers ${leader.nodeId} (${leader.why}) and ${away} cut from each other, broker ${bridge} sees both`)
  },
}

/** 25 % of the packets lost, each way, between the raw topic's main leader and every client, for two minutes. */
const lossyLink: SingleFault = {
  name: 'lossy-link',
  topology: 'cluster',
  async inject(ctx) {
    const network = networkOf(ctx)
    const broker = await rawLeader(ctx)
    return holdPartition(
      ctx,
      'lossy-link',
      [{ party: brokerParty(broker.nodeId), peers: clientAddresses(network), lossProbability: LOSSY_LINK_PROBABILITY }],
      `${LOSSY_LINK_PROBABILITY * 100} % of the packets lost each way between broker ${broker.nodeId} (${broker.why}) and every client`,
    )
  },
}

/**
 * Every partition as a single fault, for the chaos soak and the partition rows.
 * Names are stable (they are the rows' names too); each needs the cluster network
 * (`FaultSystem.network`), i.e. a run as root with iptables installed.
 */
export const PARTITION_FAULTS: SingleFault[] = [leaderFromQuorum, brokerFromClients, serviceFromCluster, bridgeSplit, lossyLink]
