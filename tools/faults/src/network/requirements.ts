import { spawnSync } from 'node:child_process'
import { NetworkError } from './network-error.ts'

const INSTALL_HINT = 'as root: apt-get update && apt-get install -y iptables (npm test\'s pretest, scripts/prepare-test.ts, does it when run as root)'

function installed(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0
}

/**
 * What this machine lacks for the cluster's private network, in words, or
 * undefined when it has everything: root, `ip` (iproute2) and `iptables` (the
 * loopback forwards of loopback-forward.ts, and the partitions themselves, with
 * the `statistic` match for random loss). `partitions` only changes the wording.
 */
export function networkUnavailableReason(options: { partitions: boolean }): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces and firewall rules need root (this run is not root)'
  if (!installed('ip', ['-V'])) return `the ip command (Debian package iproute2) is not installed; install it ${INSTALL_HINT.replace('iptables', 'iproute2')}`
  if (!installed('iptables', ['--version'])) return `iptables is not installed${options.partitions ? '' : ' (the cluster network forwards loopback ports with it)'}; install it ${INSTALL_HINT}`
  return undefined
}

/** Throws a NetworkError naming what is missing. */
export function assertNetworkAvailable(options: { partitions: boolean }): void {
  const reason = networkUnavailableReason(options)
  if (reason === undefined) return
  throw new NetworkError(reason, process.getuid?.() !== 0 ? 'NETWORK_NOT_ROOT' : 'NETWORK_TOOL_MISSING')
}
