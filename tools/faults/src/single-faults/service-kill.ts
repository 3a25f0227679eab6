import type { InjectContext } from '../inject-context.ts'
import type { SingleFault, SingleFaultOutcome } from '../single-fault.ts'
import { SERVICES, type ServiceName } from '../system.ts'

/** kill -9 of one service; the harness starts it again and the fault is healed when it answers its health check. */
export async function killService(ctx: InjectContext, name: string): Promise<SingleFaultOutcome> {
  const startedAt = Date.now()
  const downMs = await ctx.system.service(name).killAndRestart()
  return { startedAt, healedAt: Date.now(), description: `kill -9 of ${name}, back after ${(downMs / 1000).toFixed(1)} s` }
}

/** `kill-service:<name>` for one service. */
export function serviceKill(name: ServiceName): SingleFault {
  return { name: `kill-service:${name}`, topology: 'any', inject: (ctx) => killService(ctx, name) }
}

export const SERVICE_KILL_FAULTS: SingleFault[] = SERVICES.map(serviceKill)
