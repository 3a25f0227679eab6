import { isLoopbackHost } from '@tep/config'
import { HttpConfigError } from './errors.ts'

/** The oldest TLS version the clients accept (spec: "HTTPS (TLS 1.2 or newer)"). */
export const MIN_TLS_VERSION = 'TLSv1.2'

/** Only loopback hosts may be called over plain HTTP, which is what the local simulators speak. */
export { isLoopbackHost }

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
