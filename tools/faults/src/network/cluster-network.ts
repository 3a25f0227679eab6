import { planNetwork, type NetworkPlan } from './addresses.ts'
import { Bridge } from './bridge.ts'
import { NamespaceHost } from './namespace-host.ts'
import { PartitionRules } from './partition-rules.ts'
import { assertNetworkAvailable } from './requirements.ts'
import { removeStaleNetworks } from './stale-networks.ts'

/**
 * Every party of a cluster run on its own address: one network namespace per
 * Kafka node and per service under test, joined by veth pairs to a bridge in the
 * root namespace (where the registry, the simulators, bank-sync, the traffic and
 * the independent checker run, reached at `rootAddress`). Partitions are iptables
 * rules inside the namespaces (`rules(party)`).
 *
 * Torn down by `teardown()`, and also when this process exits any other way
 * (`exit`, SIGINT, SIGTERM, SIGHUP); leftovers of runs killed with SIGKILL are
 * removed by the next run's `create`.
 */
export class ClusterNetwork {
  readonly plan: NetworkPlan
  private readonly hosts = new Map<string, NamespaceHost>()
  private readonly partitionRules = new Map<string, PartitionRules>()
  private tornDown = false
  private readonly onExit = () => this.teardown()
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.teardown()
    // The default action, now that the network is gone: exit as killed by it (the 'exit' hooks still run).
    process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGHUP' ? 1 : 15))
  }

  private constructor(plan: NetworkPlan) {
    this.plan = plan
  }

  /** Builds the network for `parties` (e.g. `kafka-1`, `transaction-ingest`). Throws a NetworkError naming what is missing. */
  static create(parties: string[], options: { partitions: boolean; say?: (line: string) => void }): ClusterNetwork {
    assertNetworkAvailable({ partitions: options.partitions })
    const stale = removeStaleNetworks()
    if (stale.length > 0) options.say?.(`network: removed ${stale.length} leftover(s) of dead runs (${stale.slice(0, 4).join(', ')}${stale.length > 4 ? ', ...' : ''})`)
    const network = new ClusterNetwork(planNetwork(process.pid, parties))
    process.once('exit', network.onExit)
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, network.onSignal)
    try {
      new Bridge(network.plan.bridge, network.plan.rootAddress).create()
      for (const address of network.plan.parties) {
        const host = new NamespaceHost(address)
        network.hosts.set(address.party, host)
        host.create(network.plan.bridge, network.plan.rootAddress)
      }
    } catch (err) {
      network.teardown()
      throw err
    }
    options.say?.(`network: bridge ${network.plan.bridge} ${network.plan.subnet}.0/24, root ${network.plan.rootAddress}; ${network.plan.parties.map((p) => `${p.party} ${p.address}`).join(', ')}`)
    return network
  }

  get rootAddress(): string {
    return this.plan.rootAddress
  }

  host(party: string): NamespaceHost {
    const host = this.hosts.get(party)
    if (host === undefined) throw new Error(`no party ${party} in the run's network (${[...this.hosts.keys()].join(', ')})`)
    return host
  }

  has(party: string): boolean {
    return this.hosts.has(party)
  }

  /** The firewall of `party`, where its cuts are made and healed. */
  rules(party: string): PartitionRules {
    let rules = this.partitionRules.get(party)
    if (rules === undefined) {
      rules = new PartitionRules(this.host(party))
      this.partitionRules.set(party, rules)
    }
    return rules
  }

  /** Every cut of every party removed. */
  healAll(): void {
    for (const rules of this.partitionRules.values()) rules.heal()
  }

  /** Idempotent. Synchronous: it also runs from the process's `exit` hook. */
  teardown(): void {
    if (this.tornDown) return
    this.tornDown = true
    process.removeListener('exit', this.onExit)
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeListener(signal, this.onSignal)
    for (const host of this.hosts.values()) host.destroy()
    Bridge.destroy(this.plan.bridge)
  }
}
