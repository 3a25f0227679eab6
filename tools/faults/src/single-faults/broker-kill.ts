import type { InjectContext } from '../inject-context.ts'
import type { SingleFault, SingleFaultOutcome } from '../single-fault.ts'

/**
 * The only broker of a single-node stack killed (SIGKILL) or stopped cleanly,
 * and started again on its data: the whole cluster gone for the restart. The
 * broker faults of a replicated cluster (leader and coordinator kills, the lost
 * broker, the zombie leader) are in ../broker-faults.ts.
 */
export async function restartOnlyBroker(ctx: InjectContext, signal: 'SIGKILL' | 'SIGTERM'): Promise<SingleFaultOutcome> {
  const startedAt = Date.now()
  const outageMs = await ctx.system.restartBroker(signal)
  const what = signal === 'SIGKILL' ? 'kill -9' : 'clean stop'
  ctx.say(`  broker ${what} and restart, answering again after ${(outageMs / 1000).toFixed(1)} s`)
  return { startedAt, healedAt: Date.now(), description: `broker ${what} and restart, answering again after ${(outageMs / 1000).toFixed(1)} s` }
}

/** `broker-kill:only` / `broker-restart:only` on one broker. */
export function onlyBrokerRestart(signal: 'SIGKILL' | 'SIGTERM'): SingleFault {
  return { name: signal === 'SIGKILL' ? 'broker-kill:only' : 'broker-restart:only', topology: 'single', inject: (ctx) => restartOnlyBroker(ctx, signal) }
}

export const ONLY_BROKER_FAULTS: SingleFault[] = [onlyBrokerRestart('SIGKILL'), onlyBrokerRestart('SIGTERM')]
