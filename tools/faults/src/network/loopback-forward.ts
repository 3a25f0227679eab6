import type { NamespaceHost } from './namespace-host.ts'

/**
 * Makes `127.0.0.1:<port>` inside a party's namespace reach `<to>:<port>` in the
 * root namespace, as a sidecar would: kernel NAT (DNAT in the namespace's nat
 * OUTPUT chain, SNAT to its own address on the way out, `route_localnet` so a
 * packet from 127.0.0.1 may leave through eth0), no proxy process.
 *
 * Why: the services accept plain http only for loopback (their transport policy
 * refuses http:// to any other host), and the simulators and the registry stay in
 * the root namespace. With this a namespaced service keeps the very URLs a service
 * on the host would use, and nothing in its configuration changes for the suite.
 * The partition rules (filter table) see the translated address, so they never
 * cut these links by accident: they name broker and client addresses only.
 */
export function forwardLoopback(host: NamespaceHost, ports: number[], to: string): void {
  host.exec('sysctl', ['-qw', 'net.ipv4.conf.all.route_localnet=1'])
  for (const port of ports)
    host.exec('iptables', ['-t', 'nat', '-A', 'OUTPUT', '-d', '127.0.0.1/32', '-p', 'tcp', '--dport', String(port), '-j', 'DNAT', '--to-destination', `${to}:${port}`])
  if (!host.exec('iptables', ['-t', 'nat', '-S', 'POSTROUTING']).includes('--to-source'))
    host.exec('iptables', ['-t', 'nat', '-A', 'POSTROUTING', '-o', 'eth0', '-s', '127.0.0.0/8', '-j', 'SNAT', '--to-source', host.address])
}
