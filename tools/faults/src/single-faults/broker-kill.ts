import type { InjectContext } from '../scenarios.ts'
import type { SingleFault, SingleFaultOutcome } from '../single-fault.ts'
import { findBroker, type BrokerRole, type BrokerTarget } from './broker-targets.ts'

export interface BrokerKillOutcome extends SingleFaultOutcome {
  nodeId: number
  /** From the kill until the broker answered again. */
  outageMs: number
  /** From then until every partition had its full ISR again. */
  isrMs: number
}

/**
 * kill -9 (or a clean stop) of one node of a cluster, down for `downMs`, started
 * again on its data; resolves once every partition has its full ISR again, as an
 * operator would wait before the next step. Healed = the broker answers again.
 */
export async function killBroker(ctx: InjectContext, target: BrokerTarget, downMs: number, options: { signal?: 'SIGKILL' | 'SIGTERM'; label?: string } = {}): Promise<BrokerKillOutcome> {
  const signal = options.signal ?? 'SIGKILL'
  const what = signal === 'SIGKILL' ? 'kill -9' : 'clean stop (SIGTERM)'
  ctx.say(`  ${what} of broker ${target.nodeId} (${target.why}), down ${downMs / 1000} s${options.label ?? ''}`)
  const startedAt = Date.now()
  const outageMs = await ctx.system.restartBrokerNode(target.nodeId, signal, downMs)
  const healedAt = Date.now()
  const isrMs = await ctx.system.probe.waitFullIsr()
  ctx.say(`  broker ${target.nodeId} back after ${(outageMs / 1000).toFixed(1)} s, full ISR after ${(isrMs / 1000).toFixed(1)} s more`)
  return {
    startedAt,
    healedAt,
    nodeId: target.nodeId,
    outageMs,
    isrMs,
    description: `${what} of broker ${target.nodeId} (${target.why}), answering ${(outageMs / 1000).toFixed(1)} s after, full ISR ${(isrMs / 1000).toFixed(1)} s later`,
  }
}

/** The only broker of a single-node stack killed (SIGKILL) or stopped cleanly, and started again on its data. */
export async function restartOnlyBroker(ctx: InjectContext, signal: 'SIGKILL' | 'SIGTERM'): Promise<SingleFaultOutcome> {
  const startedAt = Date.now()
  const outageMs = await ctx.system.restartBroker(signal)
  const what = signal === 'SIGKILL' ? 'kill -9' : 'clean stop'
  ctx.say(`  broker ${what} and restart, answering again after ${(outageMs / 1000).toFixed(1)} s`)
  return { startedAt, healedAt: Date.now(), description: `broker ${what} and restart, answering again after ${(outageMs / 1000).toFixed(1)} s` }
}

/** `broker-kill:<role>` on a cluster: the broker playing that role now, down `downMs` (default 20 s, as the leader-kill row). */
export function brokerKill(role: BrokerRole, downMs = 20_000): SingleFault {
  return { name: `broker-kill:${role}`, topology: 'cluster', inject: async (ctx) => killBroker(ctx, await findBroker(ctx.system, role), downMs) }
}

/** `broker-restart:<role>` on a cluster: one step of a rolling restart (SIGTERM, started again at once). */
export function brokerCleanRestart(role: BrokerRole): SingleFault {
  return { name: `broker-restart:${role}`, topology: 'cluster', inject: async (ctx) => killBroker(ctx, await findBroker(ctx.system, role), 0, { signal: 'SIGTERM' }) }
}

/** `broker-kill:only` / `broker-restart:only` on one broker: the whole cluster gone for the restart. */
export function onlyBrokerRestart(signal: 'SIGKILL' | 'SIGTERM'): SingleFault {
  return { name: signal === 'SIGKILL' ? 'broker-kill:only' : 'broker-restart:only', topology: 'single', inject: (ctx) => restartOnlyBroker(ctx, signal) }
}

export const BROKER_KILL_FAULTS: SingleFault[] = [
  brokerKill('leader'),
  brokerKill('txn-coordinator', 15_000),
  brokerKill('group-coordinator', 15_000),
  brokerCleanRestart('leader'),
  onlyBrokerRestart('SIGKILL'),
  onlyBrokerRestart('SIGTERM'),
]
