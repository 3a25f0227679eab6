import type { InjectContext } from '../scenarios.ts'
import type { SingleFault, SingleFaultOutcome } from '../single-fault.ts'
import { findBroker } from './broker-targets.ts'

/**
 * The raw topic's main leader frozen (SIGSTOP) for `ms`, longer than its session
 * timeout (9 s), then continued (SIGCONT): a zombie leader. Healed = continued;
 * resolves once the ISR is full again.
 */
export async function pauseLeader(ctx: InjectContext, ms: number): Promise<SingleFaultOutcome & { nodeId: number; isrMs: number }> {
  const target = await findBroker(ctx.system, 'leader')
  ctx.say(`  broker ${target.nodeId} (${target.why}) frozen for ${ms / 1000} s`)
  const startedAt = Date.now()
  await ctx.system.pauseBroker(target.nodeId, ms)
  const healedAt = Date.now()
  const isrMs = await ctx.system.probe.waitFullIsr()
  ctx.say(`  broker ${target.nodeId} continued; full ISR after ${(isrMs / 1000).toFixed(1)} s`)
  return { startedAt, healedAt, nodeId: target.nodeId, isrMs, description: `broker ${target.nodeId} (${target.why}) frozen ${ms / 1000} s; full ISR ${(isrMs / 1000).toFixed(1)} s after SIGCONT` }
}

export const BROKER_PAUSE_FAULT: SingleFault = { name: 'broker-pause:leader', topology: 'cluster', inject: (ctx) => pauseLeader(ctx, 20_000) }
