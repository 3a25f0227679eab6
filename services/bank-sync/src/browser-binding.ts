import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * Binds an authorization flow to the browser that started it. The gateway makes
 * a random secret, keeps it in an HttpOnly cookie of that browser (scoped to the
 * callback path and to this one consent) and puts its SHA-256 in the signed
 * state. A callback is accepted only with the cookie whose hash the state names,
 * so a bank redirect delivered to any other browser (a forged or leaked link) is
 * refused. The secret doubles as the PKCE code verifier and its hash as the S256
 * code challenge: the bank then also refuses the code without this browser.
 */
export const CALLBACK_PATH = '/consents/callback'
const COOKIE_PREFIX = 'tep_consent_'

export interface BrowserBinding {
  /** The cookie value and PKCE code verifier (43 base64url characters). */
  secret: string
  /** base64url(SHA-256(secret)): the state's binding and the PKCE S256 code challenge. */
  hash: string
}

export function createBinding(): BrowserBinding {
  const secret = randomBytes(32).toString('base64url')
  return { secret, hash: hashOf(secret) }
}

export function hashOf(secret: string): string {
  return createHash('sha256').update(secret, 'ascii').digest('base64url')
}

/** True when `secret` is the one whose hash the state carries (constant time). */
export function matches(secret: string | undefined, hash: string): boolean {
  if (secret === undefined || secret === '') return false
  const a = Buffer.from(hashOf(secret))
  const b = Buffer.from(hash)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * The cookie's name. Over TLS it has the `__Host-` prefix: browsers accept such a
 * cookie only from this exact host over https, with Secure, Path=/ and no Domain, so
 * a sibling subdomain cannot plant one (the planted flow would record the victim's
 * accounts under the attacker's customer). Plain HTTP on loopback (development,
 * `npm start`) cannot use the prefix; there the unprefixed name scoped to the
 * callback path is the documented fallback.
 */
export function cookieName(consentId: string, secure: boolean): string {
  return `${secure ? '__Host-' : ''}${COOKIE_PREFIX}${consentId}`
}

/**
 * The Set-Cookie of a new flow: HttpOnly (no script reads it), SameSite=Lax (sent
 * on the bank's top-level redirect, not on cross-site subrequests); over TLS
 * `__Host-` with Secure and Path=/ (the prefix requires both), on plain-HTTP
 * loopback Path = the callback only.
 */
export function setCookie(consentId: string, secret: string, options: { secure: boolean; maxAgeS: number }): string {
  return [`${cookieName(consentId, options.secure)}=${secret}`, ...attributes(options.secure), `Max-Age=${options.maxAgeS}`].join('; ')
}

/** Expires the cookie of a finished flow. */
export function clearCookie(consentId: string, options: { secure: boolean }): string {
  return [`${cookieName(consentId, options.secure)}=`, ...attributes(options.secure), 'Max-Age=0'].join('; ')
}

function attributes(secure: boolean): string[] {
  return secure ? ['Path=/', 'Secure', 'HttpOnly', 'SameSite=Lax'] : [`Path=${CALLBACK_PATH}`, 'HttpOnly', 'SameSite=Lax']
}

/** The value of cookie `name` in a Cookie header (undefined when absent). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}
