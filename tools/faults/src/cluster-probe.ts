import { Admin, FindCoordinatorKeyTypes } from '@platformatic/kafka'

/**
 * What the cluster rows need to know before they hurt a broker: who leads a
 * topic's partitions, who coordinates a transactional id or a group, and
 * whether every partition has its full ISR again (operators wait for that
 * between the steps of a rolling restart). A fresh admin per question: a
 * cached connection to a broker that was just killed would answer nothing.
 */
export class ClusterProbe {
  readonly #brokers: string[]

  constructor(brokers: string[]) {
    this.#brokers = brokers
  }

  async #withAdmin<T>(run: (admin: Admin) => Promise<T>): Promise<T> {
    const admin = new Admin({ clientId: 'tep-faults-probe', bootstrapBrokers: this.#brokers, retries: 2, retryDelay: 200 })
    try {
      return await run(admin)
    } finally {
      await admin.close().catch(() => {})
    }
  }

  /** The leader of each partition of `topic`, by partition index (-1: none). */
  leadersOf(topic: string): Promise<number[]> {
    return this.#withAdmin(async (admin) => {
      const metadata = await admin.metadata({ topics: [topic], forceUpdate: true })
      return (metadata.topics.get(topic)?.partitions ?? []).map((p) => p.leader)
    })
  }

  /** The node leading the most partitions of `topic` (ties: the lowest id). */
  async leaderOfMostPartitions(topic: string): Promise<{ nodeId: number; partitions: number; of: number }> {
    const leaders = await this.leadersOf(topic)
    const counts = new Map<number, number>()
    for (const leader of leaders) counts.set(leader, (counts.get(leader) ?? 0) + 1)
    const [nodeId, n] = [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0] ?? [-1, 0]
    return { nodeId, partitions: n, of: leaders.length }
  }

  /** The node coordinating a transactional id or a consumer group (FindCoordinator). */
  coordinatorOf(kind: 'transaction' | 'group', key: string): Promise<number> {
    return this.#withAdmin(async (admin) => {
      const [found] = await admin.findCoordinator({
        keyType: kind === 'transaction' ? FindCoordinatorKeyTypes.TRANSACTION : FindCoordinatorKeyTypes.GROUP,
        keys: [key],
      })
      if (found === undefined) throw new Error(`no coordinator found for ${kind} ${key}`)
      return found.nodeId
    })
  }

  /** Partitions (of every topic, internal ones included) whose ISR is smaller than their replica set. */
  underReplicated(): Promise<string[]> {
    return this.#withAdmin(async (admin) => {
      const topics = await admin.listTopics({ includeInternals: true })
      const metadata = await admin.metadata({ topics, forceUpdate: true })
      // A topic deleted between the two calls comes back without metadata.
      return [...metadata.topics].flatMap(([name, t]) =>
        (t?.partitions ?? []).flatMap((p, i) => (p.isr.length < p.replicas.length || p.leader < 0 ? [`${name}/${i}`] : [])),
      )
    })
  }

  /** Waits until no partition is under-replicated; returns how long it took, or throws after `timeoutMs`. */
  async waitFullIsr(timeoutMs = 180_000): Promise<number> {
    const started = Date.now()
    let last: string[] = []
    while (Date.now() - started < timeoutMs) {
      last = await this.underReplicated().catch(() => ['(cluster not answering)'])
      if (last.length === 0) return Date.now() - started
      await new Promise((r) => setTimeout(r, 1_000))
    }
    throw new Error(`ISR not full after ${timeoutMs / 1000} s: ${last.slice(0, 5).join(', ')}${last.length > 5 ? ', ...' : ''}`)
  }
}
