import type { NamespaceHost } from './namespace-host.ts'

/** The chain of ours in each namespace, hooked first into INPUT and OUTPUT. Healing flushes it. */
const CHAIN = 'TEPF_PARTITION'

export interface CutOptions {
  /**
   * Share of packets dropped, 0 < p < 1 (`-m statistic --mode random`): a lossy
   * link instead of a blackhole. Absent: every packet dropped.
   */
  lossProbability?: number
}

/**
 * The firewall of one party: DROP rules by peer address, in both directions
 * (INPUT from the peer, OUTPUT to it), so a cut is symmetric and established
 * connections go half-open rather than being refused (no conntrack shortcut,
 * no RST): what a real partition does to a TCP client. No `tc netem` on these
 * machines, so no delay; loss and blackholes are what can be made.
 */
export class PartitionRules {
  private readonly host: NamespaceHost
  private installed = false

  constructor(host: NamespaceHost) {
    this.host = host
  }

  private install(): void {
    if (this.installed) return
    this.host.exec('iptables', ['-N', CHAIN], { ignoreFailure: true })
    for (const hook of ['INPUT', 'OUTPUT']) {
      // Looked up first: a second install must not hook the chain twice.
      if (!this.hooked(hook)) this.host.exec('iptables', ['-I', hook, '1', '-j', CHAIN])
    }
    this.installed = true
  }

  private hooked(hook: string): boolean {
    return this.host.exec('iptables', ['-S', hook]).includes(`-j ${CHAIN}`)
  }

  /** This party no longer exchanges packets with `peers` (addresses), or loses a share of them. */
  cut(peers: string[], options: CutOptions = {}): void {
    this.install()
    const p = options.lossProbability
    if (p !== undefined && !(p > 0 && p < 1)) throw new RangeError(`lossProbability must be in (0, 1), got ${p}`)
    const loss = p === undefined ? [] : ['-m', 'statistic', '--mode', 'random', '--probability', String(p)]
    for (const peer of peers) {
      this.host.exec('iptables', ['-A', CHAIN, '-s', peer, ...loss, '-j', 'DROP'])
      this.host.exec('iptables', ['-A', CHAIN, '-d', peer, ...loss, '-j', 'DROP'])
    }
  }

  /** Every cut of this party removed. */
  heal(): void {
    if (!this.installed) return
    this.host.exec('iptables', ['-F', CHAIN], { ignoreFailure: true })
  }

  /** The rules in force, as `iptables -S` prints them (for the log). */
  describe(): string[] {
    if (!this.installed) return []
    return this.host.exec('iptables', ['-S', CHAIN], { ignoreFailure: true }).split('\n').filter((l) => l.startsWith('-A'))
  }
}
