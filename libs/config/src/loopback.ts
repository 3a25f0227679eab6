import { isIP } from 'node:net'

/**
 * The project's one definition of "loopback": hosts that cannot leave the machine, where
 * plain http (the simulators, `npm start`), the development keys and a plain registry
 * without a warning are allowed. 127.0.0.0/8, ::1 in any spelling (also bracketed, as in a
 * URL's hostname, and IPv4-mapped ::ffff:127.x.y.z), `localhost` and `*.localhost`
 * (RFC 6761: resolves to loopback). @tep/http and @tep/kafka use this one.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
  const lower = host.toLowerCase()
  if (lower === 'localhost' || lower.endsWith('.localhost')) return true
  const family = isIP(lower)
  if (family === 4) return lower.split('.')[0] === '127'
  if (family === 6) {
    if (lower === '::1' || /^(0{1,4}:){7}0{0,3}1$/.test(lower)) return true
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
    if (mapped !== null) return mapped[1]!.split('.')[0] === '127'
    // The WHATWG URL parser writes ::ffff:127.0.0.1 as ::ffff:7f00:1.
    const hex = /^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(lower)
    return hex !== null && parseInt(hex[1]!, 16) >> 8 === 0x7f
  }
  return false
}
