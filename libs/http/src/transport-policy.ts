import { isIP } from 'node:net'
import { HttpConfigError } from './errors.ts'

/** The oldest TLS version the clients accept (spec: "HTTPS (TLS 1.2 or newer)"). */
export const MIN_TLS_VERSION = 'TLSv1.2'

/**
 * True for hosts that cannot leave the machine: 127.0.0.0/8, ::1 (also as an
 * IPv4-mapped address) and `localhost`. Only these may be called over plain HTTP,
 * which is what the local simulators speak.
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
    return mapped !== null && mapped[1]!.split('.')[0] === '127'
  }
  return false
}

/**
 * Parses and checks a URL the client will call: https:// anywhere, http:// only
 * to loopback, no credentials embedded in it. Throws HttpConfigError naming `name`
 * (the setting it came from, e.g. `ENRICHMENT_API_URL`) so the operator knows what
 * to fix. Returns the parsed URL.
 */
export function assertSecureUrl(raw: string | URL, name = 'url'): URL {
  let url: URL
  try {
    url = raw instanceof URL ? new URL(raw.href) : new URL(raw)
  } catch (cause) {
    throw new HttpConfigError(
      `${name} must be an absolute https:// URL, got ${JSON.stringify(String(raw))}`,
      { setting: name, cause: String(cause) },
    )
  }
  if (url.username !== '' || url.password !== '') {
    // Never echo the URL here: it holds the credentials.
    throw new HttpConfigError(
      `${name} must not contain credentials (user:password@); pass them as client options`,
      { setting: name },
    )
  }
  if (url.protocol === 'https:') return url
  if (url.protocol === 'http:') {
    if (isLoopbackHost(url.hostname)) return url
    throw new HttpConfigError(
      `${name} must be an https:// URL (plain http is allowed only for loopback: 127.0.0.0/8, ::1, localhost), got ${url.origin}`,
      { setting: name, origin: url.origin },
    )
  }
  throw new HttpConfigError(
    `${name} must be an https:// URL, got protocol ${url.protocol} in ${url.origin}`,
    { setting: name },
  )
}
