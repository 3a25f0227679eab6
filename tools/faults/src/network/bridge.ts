import { run } from './command.ts'

/**
 * The run's switch: a Linux bridge in the root namespace, holding the root's
 * address, to which every party's veth pair is attached. Traffic between two
 * namespaces crosses it at layer 2, so the firewall rules inside each namespace
 * are the only thing that decides what gets through.
 */
export class Bridge {
  readonly name: string
  readonly address: string

  constructor(name: string, address: string) {
    this.name = name
    this.address = address
  }

  create(): void {
    run('ip', ['link', 'add', this.name, 'type', 'bridge'])
    run('ip', ['addr', 'add', `${this.address}/24`, 'dev', this.name])
    run('ip', ['link', 'set', this.name, 'up'])
  }

  /** Idempotent; also for a bridge of a dead run. */
  static destroy(name: string): void {
    run('ip', ['link', 'del', name], { ignoreFailure: true })
  }
}
