/** Why the fault suite's private network could not be built or changed. */
export type NetworkErrorCode =
  /** Namespaces, veth pairs and firewall rules need root (CAP_NET_ADMIN). */
  | 'NETWORK_NOT_ROOT'
  /** `ip` (iproute2) or `iptables` is not installed. */
  | 'NETWORK_TOOL_MISSING'
  /** A command of `ip` or `iptables` exited with an error. */
  | 'NETWORK_COMMAND_FAILED'
  /** Every candidate /24 of 10.213.0.0/16 is already routed on this machine. */
  | 'NETWORK_NO_SUBNET'

export class NetworkError extends Error {
  readonly code: NetworkErrorCode
  /** None of these goes away by trying again: a missing tool or right stays missing. */
  readonly retriable = false

  constructor(message: string, code: NetworkErrorCode, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'NetworkError'
    this.code = code
  }
}
