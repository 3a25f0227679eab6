import type { InjectContext } from '../inject-context.ts'
import type { SingleFault, SingleFaultOutcome } from '../single-fault.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)))

/**
 * The schema registry frozen (SIGSTOP) for `outageMs`, and transaction-ingest
 * killed and restarted a quarter of the way in, so it needs the registry while
 * the registry does not answer. Healed = the registry continued and the ingest
 * answers its health check.
 */
export async function registryOutage(ctx: InjectContext, outageMs: number): Promise<SingleFaultOutcome> {
  ctx.say(`  registry stopped for ${outageMs / 1000} s`)
  const startedAt = Date.now()
  const outage = ctx.system.stopRegistry(outageMs)
  await sleep(outageMs / 4)
  const restart = ctx.system.service('transaction-ingest').killAndRestart()
  await outage
  ctx.say('  registry continued')
  await restart
  return { startedAt, healedAt: Date.now(), description: `registry frozen ${outageMs / 1000} s, transaction-ingest restarted during it` }
}

export const REGISTRY_OUTAGE_FAULT: SingleFault = { name: 'registry-outage', topology: 'any', inject: (ctx) => registryOutage(ctx, 30_000) }
