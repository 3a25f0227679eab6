import type { InjectContext } from './inject-context.ts'
import type { SingleFault, SingleFaultOutcome } from './single-fault.ts'

/**
 * Broker faults of a replicated cluster, each injected once and healed: the
 * kills and the pause the cluster rows repeat (cluster-scenarios.ts), and the
 * chaos soak's draw. Every fault hits the broker that matters most at that
 * moment (Metadata and FindCoordinator through cluster-probe.ts) and is over
 * only when every partition has its full ISR again, as an operator would wait.
 */

/** The ingest's transactional id in the fault system (prefix + stable instance id). */
export const INGEST_TRANSACTIONAL_ID = 'transaction-ingest-transaction-ingest-0'
export const INGEST_GROUP = 'transaction-ingest'
export const RAW_TOPIC = 'transactions.raw.v1'

/** How long `broker-lost` keeps its broker down: long enough that nothing may wait for it. */
export const BROKER_LOST_DOWN_MS = 180_000

export interface BrokerTarget {
  nodeId: number
  /** In words, for the log: "leader of 3/6 raw partitions, transaction coordinator". */
  why: string
}

/** What a broker kill did, beyond the SingleFault outcome: when the kill was sent (the rows measure the output's pause from it). */
export interface BrokerKillOutcome extends SingleFaultOutcome {
  nodeId: number
  killedAt: number
  /** From the kill until the restarted broker answered. */
  outageMs: number
  /** From the restarted broker answering until every partition had its full ISR. */
  isrMs: number
}

/** The broker leading most raw partitions. */
export async function rawLeader(ctx: InjectContext): Promise<BrokerTarget> {
  const l = await ctx.system.probe.leaderOfMostPartitions(RAW_TOPIC)
  return { nodeId: l.nodeId, why: `leader of ${l.partitions}/${l.of} raw partitions` }
}

/** The coordinator of the ingest's transactional id or consumer group. */
export async function coordinator(ctx: InjectContext, kind: 'transaction' | 'group'): Promise<BrokerTarget> {
  const key = kind === 'transaction' ? INGEST_TRANSACTIONAL_ID : INGEST_GROUP
  const nodeId = await ctx.system.probe.coordinatorOf(kind, key)
  return { nodeId, why: kind === 'transaction' ? `transaction coordinator of ${key}` : `group coordinator of ${key}` }
}

/**
 * The broker whose loss hurts the ingest most: each raw partition it leads counts
 * one, being the transaction or the group coordinator counts as many as the raw
 * partitions (the whole transaction, or every offset, waits for it); ties go to the
 * lowest node id. What the issue saw: one broker leading two raw partitions and
 * coordinating both the transactions and the group.
 */
export async function mostImportantBroker(ctx: InjectContext): Promise<BrokerTarget> {
  const leaders = await ctx.system.probe.leadersOf(RAW_TOPIC)
  const txn = await ctx.system.probe.coordinatorOf('transaction', INGEST_TRANSACTIONAL_ID)
  const group = await ctx.system.probe.coordinatorOf('group', INGEST_GROUP)
  const led = new Map<number, number>()
  for (const leader of leaders) led.set(leader, (led.get(leader) ?? 0) + 1)
  const nodes = Array.from({ length: ctx.system.brokerCount }, (_, i) => i + 1)
  const score = (n: number) => (led.get(n) ?? 0) + (n === txn ? leaders.length : 0) + (n === group ? leaders.length : 0)
  const nodeId = [...nodes].sort((a, b) => score(b) - score(a) || a - b)[0]!
  const roles = [
    `leader of ${led.get(nodeId) ?? 0}/${leaders.length} raw partitions`,
    ...(nodeId === txn ? ['transaction coordinator'] : []),
    ...(nodeId === group ? ['group coordinator'] : []),
  ]
  return { nodeId, why: roles.join(', ') }
}

/** kill -9 of the broker `target` picks, down `downMs`, started again on its data; over when the ISR is full. */
export async function killBroker(ctx: InjectContext, target: BrokerTarget, downMs: number): Promise<BrokerKillOutcome> {
  ctx.say(`  kill -9 of broker ${target.nodeId} (${target.why}), down ${downMs / 1000} s`)
  const killedAt = Date.now()
  const outageMs = await ctx.system.restartBrokerNode(target.nodeId, 'SIGKILL', downMs)
  const isrMs = await ctx.system.probe.waitFullIsr()
  ctx.say(`  broker ${target.nodeId} back after ${(outageMs / 1000).toFixed(1)} s, full ISR after ${(isrMs / 1000).toFixed(1)} s more`)
  return {
    nodeId: target.nodeId,
    killedAt,
    outageMs,
    isrMs,
    startedAt: killedAt,
    healedAt: Date.now(),
    description: `kill -9 of broker ${target.nodeId} (${target.why}), down ${downMs / 1000} s: answering ${(outageMs / 1000).toFixed(1)} s after the kill, full ISR ${(isrMs / 1000).toFixed(1)} s later`,
  }
}

/** The raw topic's main leader frozen (SIGSTOP) for `ms`, then continued: a zombie leader. */
export async function pauseRawLeader(ctx: InjectContext, ms: number): Promise<SingleFaultOutcome> {
  const l = await rawLeader(ctx)
  ctx.say(`  broker ${l.nodeId} (${l.why}) frozen for ${ms / 1000} s`)
  const startedAt = Date.now()
  await ctx.system.pauseBroker(l.nodeId, ms)
  const isrMs = await ctx.system.probe.waitFullIsr()
  ctx.say(`  broker ${l.nodeId} continued; full ISR after ${(isrMs / 1000).toFixed(1)} s`)
  return { startedAt, healedAt: Date.now(), description: `broker ${l.nodeId} (${l.why}) frozen ${ms / 1000} s; full ISR ${(isrMs / 1000).toFixed(1)} s after SIGCONT` }
}

const killFault = (name: string, downMs: number, pick: (ctx: InjectContext) => Promise<BrokerTarget>): SingleFault => ({
  name,
  topology: 'cluster',
  inject: async (ctx) => killBroker(ctx, await pick(ctx), downMs),
})

/**
 * The broker faults as single faults, for the chaos soak: the loss of the broker
 * that matters most (down three minutes), the kills of the raw topic's main leader
 * and of each coordinator (back after 20 / 15 s), and a zombie leader (frozen 20 s).
 */
export const BROKER_FAULTS: SingleFault[] = [
  killFault('broker-lost', BROKER_LOST_DOWN_MS, mostImportantBroker),
  killFault('leader-kill', 20_000, rawLeader),
  killFault('txn-coordinator-kill', 15_000, (ctx) => coordinator(ctx, 'transaction')),
  killFault('group-coordinator-kill', 15_000, (ctx) => coordinator(ctx, 'group')),
  { name: 'broker-pause', topology: 'cluster', inject: (ctx) => pauseRawLeader(ctx, 20_000) },
]
