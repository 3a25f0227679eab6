import { run } from './command.ts'
import type { PartyAddress } from './addresses.ts'

/**
 * One party of the run (a Kafka node, a service) on its own address: a network
 * namespace with loopback and `eth0`, the inner end of a veth pair whose outer
 * end sits on the bridge. Processes are started in it with `commandPrefix`
 * (`ip netns exec <ns>` execs, so the pid a supervisor keeps is the process's).
 */
export class NamespaceHost {
  readonly party: string
  readonly namespace: string
  readonly address: string
  private readonly hostVeth: string

  constructor(address: PartyAddress) {
    this.party = address.party
    this.namespace = address.namespace
    this.address = address.address
    this.hostVeth = address.hostVeth
  }

  get commandPrefix(): string[] {
    return ['ip', 'netns', 'exec', this.namespace]
  }

  create(bridge: string, rootAddress: string): void {
    const peer = `${this.hostVeth}p`
    run('ip', ['netns', 'add', this.namespace])
    run('ip', ['link', 'add', this.hostVeth, 'type', 'veth', 'peer', 'name', peer])
    run('ip', ['link', 'set', peer, 'netns', this.namespace])
    run('ip', ['-n', this.namespace, 'link', 'set', peer, 'name', 'eth0'])
    run('ip', ['-n', this.namespace, 'addr', 'add', `${this.address}/24`, 'dev', 'eth0'])
    run('ip', ['-n', this.namespace, 'link', 'set', 'eth0', 'up'])
    run('ip', ['-n', this.namespace, 'link', 'set', 'lo', 'up'])
    // Everything outside the subnet (nothing the suite uses) goes through the root namespace.
    run('ip', ['-n', this.namespace, 'route', 'add', 'default', 'via', rootAddress])
    run('ip', ['link', 'set', this.hostVeth, 'master', bridge])
    run('ip', ['link', 'set', this.hostVeth, 'up'])
  }

  /** `command args` inside the namespace (iptables). */
  exec(command: string, args: string[], options: { ignoreFailure?: boolean } = {}): string {
    return run('ip', ['netns', 'exec', this.namespace, command, ...args], options)
  }

  /**
   * Idempotent. Processes still inside keep the namespace alive until they exit
   * (the kernel removes the veth pair with it); the name is gone at once.
   */
  static destroy(namespace: string, hostVeth?: string): void {
    run('ip', ['netns', 'del', namespace], { ignoreFailure: true })
    if (hostVeth !== undefined) run('ip', ['link', 'del', hostVeth], { ignoreFailure: true })
  }

  destroy(): void {
    NamespaceHost.destroy(this.namespace, this.hostVeth)
  }
}
