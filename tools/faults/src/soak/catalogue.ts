import { API_CHAOS_FAULTS } from '../single-faults/api-chaos.ts'
import { BROKER_KILL_FAULTS } from '../single-faults/broker-kill.ts'
import { BROKER_PAUSE_FAULT } from '../single-faults/broker-pause.ts'
import { REGISTRY_OUTAGE_FAULT } from '../single-faults/registry-outage.ts'
import { SERVICE_KILL_FAULTS } from '../single-faults/service-kill.ts'
import type { SingleFault } from '../single-fault.ts'

/**
 * Every fault the soak can draw from: the suite's faults as SingleFaults (kills
 * of each service, broker kills, clean restarts and pauses of the leader and the
 * coordinators, the registry outage, enrichment and bank API chaos) plus the
 * network partitions and the lost broker. A fault is named `<kind>:<target>`
 * (`kill-service:refresher`) or just `<kind>` when it has one target.
 */
export const CORE_FAULTS: readonly SingleFault[] = [...SERVICE_KILL_FAULTS, ...BROKER_KILL_FAULTS, BROKER_PAUSE_FAULT, REGISTRY_OUTAGE_FAULT, ...API_CHAOS_FAULTS]

export interface Catalogue {
  /** The faults this topology can run, in catalogue order. */
  faults: SingleFault[]
  /** The ones it cannot, and why. */
  skipped: Array<{ name: string; why: string }>
}

export const kindOf = (name: string): string => name.split(':')[0]!
export const targetOf = (name: string): string => name.split(':').slice(1).join(':')

/** Why `fault` cannot run on `brokers` nodes, or undefined when it can. */
export function topologyProblem(fault: SingleFault, brokers: number): string | undefined {
  if (fault.topology === 'cluster' && brokers < 3) return 'needs a replicated cluster (--brokers 3)'
  if (fault.topology === 'single' && brokers !== 1) return 'restarts the only broker (--brokers 1)'
  return undefined
}

/** The catalogue for `brokers` nodes: `extra` faults after the core ones, a name seen twice kept once (the first). */
export function soakCatalogue(brokers: number, extra: readonly SingleFault[] = []): Catalogue {
  const faults: SingleFault[] = []
  const skipped: Catalogue['skipped'] = []
  const seen = new Set<string>()
  for (const fault of [...CORE_FAULTS, ...extra]) {
    if (seen.has(fault.name)) continue
    seen.add(fault.name)
    const why = topologyProblem(fault, brokers)
    if (why === undefined) faults.push(fault)
    else skipped.push({ name: fault.name, why })
  }
  return { faults, skipped }
}
