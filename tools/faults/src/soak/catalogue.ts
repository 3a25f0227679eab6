import { BROKER_FAULTS } from '../broker-faults.ts'
import { PARTITION_FAULTS } from '../network/partition-faults.ts'
import { API_CHAOS_FAULTS } from '../single-faults/api-chaos.ts'
import { ONLY_BROKER_FAULTS } from '../single-faults/broker-kill.ts'
import { REGISTRY_OUTAGE_FAULT } from '../single-faults/registry-outage.ts'
import { SERVICE_KILL_FAULTS } from '../single-faults/service-kill.ts'
import type { SingleFault } from '../single-fault.ts'

/**
 * Every fault the soak can draw from: the suite's faults as SingleFaults (kills
 * of each service, broker kills, clean restarts and pauses of the leader and the
 * coordinators, the registry outage, enrichment and bank API chaos) plus the
 * network partitions and the lost broker. A fault is named `<kind>:<target>`
 * (`kill-service:refresher`), or by its own name (the rows' names: `leader-kill`,
 * `partition-bridge`), its kind then given by KIND_OF_NAME.
 */
export const CORE_FAULTS: readonly SingleFault[] = [...SERVICE_KILL_FAULTS, ...ONLY_BROKER_FAULTS, ...BROKER_FAULTS, REGISTRY_OUTAGE_FAULT, ...API_CHAOS_FAULTS, ...PARTITION_FAULTS]

/** Faults that need the cluster network (every party in its own namespace: root, iproute2, iptables). */
const NEEDS_NETWORK = new Set(PARTITION_FAULTS.map((f) => f.name))

/**
 * Kinds of the faults named like rows: the plan draws a kind, then a target, so
 * four broker kills and five partitions weigh as one kind each, like the four
 * service kills and the nine API bursts.
 */
const KIND_OF_NAME: Array<[RegExp, string]> = [
  [/^(broker-lost|leader-kill|txn-coordinator-kill|group-coordinator-kill)$/, 'broker-kill'],
  [/^(partition-.+|lossy-link)$/, 'partition'],
]

export interface Catalogue {
  /** The faults this topology can run, in catalogue order. */
  faults: SingleFault[]
  /** The ones it cannot, and why. */
  skipped: Array<{ name: string; why: string }>
}

export function kindOf(name: string): string {
  if (name.includes(':')) return name.split(':')[0]!
  return KIND_OF_NAME.find(([re]) => re.test(name))?.[1] ?? name
}

/** The target within the kind: after the colon, or the fault's own name when its kind is a group of named faults; '' when the kind has one fault. */
export function targetOf(name: string): string {
  if (name.includes(':')) return name.split(':').slice(1).join(':')
  return kindOf(name) === name ? '' : name
}

/** Why `fault` cannot run on `brokers` nodes, or undefined when it can. */
export function topologyProblem(fault: SingleFault, brokers: number): string | undefined {
  if (fault.topology === 'cluster' && brokers < 3) return 'needs a replicated cluster (--brokers 3)'
  if (fault.topology === 'single' && brokers !== 1) return 'restarts the only broker (--brokers 1)'
  return undefined
}

/**
 * The catalogue for `brokers` nodes: `extra` faults after the core ones, a name
 * seen twice kept once (the first). `networkProblem`: why this run has no
 * cluster network (the partitions are then skipped with that reason).
 */
export function soakCatalogue(brokers: number, options: { extra?: readonly SingleFault[]; networkProblem?: string } = {}): Catalogue {
  const extra = options.extra ?? []
  const faults: SingleFault[] = []
  const skipped: Catalogue['skipped'] = []
  const seen = new Set<string>()
  for (const fault of [...CORE_FAULTS, ...extra]) {
    if (seen.has(fault.name)) continue
    seen.add(fault.name)
    const why = topologyProblem(fault, brokers) ?? (NEEDS_NETWORK.has(fault.name) && options.networkProblem !== undefined ? `needs the cluster network: ${options.networkProblem}` : undefined)
    if (why === undefined) faults.push(fault)
    else skipped.push({ name: fault.name, why })
  }
  return { faults, skipped }
}
