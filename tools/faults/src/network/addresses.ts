import { run } from './command.ts'
import { NetworkError } from './network-error.ts'

/**
 * Names and addresses of one run's private network. Everything carries the
 * owner's pid (`tepf<pid>...`), so that two runs at once never share a name, and
 * a later run can tell the leftovers of a dead one (its pid gone) from those of a
 * live one. Interface names stay within Linux's 15 characters.
 */
export const NAME_PREFIX = 'tepf'

export interface PartyAddress {
  /** The party as the suite names it: `kafka-1`, `transaction-ingest`, ... */
  party: string
  /** `ip netns` name. */
  namespace: string
  /** The root namespace's end of its veth pair (on the bridge). */
  hostVeth: string
  address: string
}

export interface NetworkPlan {
  ownerPid: number
  bridge: string
  /** `10.213.<n>` */
  subnet: string
  /** The root namespace's address on the bridge: the registry, the simulators, the traffic and the checker are reached there. */
  rootAddress: string
  parties: PartyAddress[]
}

/** /24s already on this machine's routes (`10.213.7` for 10.213.7.0/24). */
function routedSubnets(): Set<string> {
  const out = run('ip', ['-4', 'route', 'show'], { ignoreFailure: true })
  return new Set([...out.matchAll(/\b(10\.213\.\d+)\.\d+/g)].map((m) => m[1]!))
}

/**
 * A plan for `parties` owned by `ownerPid`: a free 10.213.x.0/24 (starting from
 * the pid, so concurrent runs start apart), the bridge at .1, the parties from
 * .11 on in the order given.
 */
export function planNetwork(ownerPid: number, parties: string[], taken: Set<string> = routedSubnets()): NetworkPlan {
  let subnet: string | undefined
  for (let i = 0; i < 256; i++) {
    const candidate = `10.213.${(ownerPid + i) % 256}`
    if (!taken.has(candidate)) {
      subnet = candidate
      break
    }
  }
  if (subnet === undefined) throw new NetworkError('no free /24 in 10.213.0.0/16 for the fault suite\'s network', 'NETWORK_NO_SUBNET')
  const tag = `${NAME_PREFIX}${ownerPid}`
  return {
    ownerPid,
    bridge: `${tag}b`,
    subnet,
    rootAddress: `${subnet}.1`,
    parties: parties.map((party, i) => ({ party, namespace: `${tag}-${party}`, hostVeth: `${tag}v${i}`, address: `${subnet}.${11 + i}` })),
  }
}

/** The owner pid a name of ours carries, or undefined for a name that is not ours. */
export function ownerOf(name: string): number | undefined {
  const m = new RegExp(`^${NAME_PREFIX}(\\d+)[-bv]`).exec(name)
  return m === null ? undefined : Number(m[1])
}
