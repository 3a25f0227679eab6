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

export function cookieName(consentId: string): string {
  return `${COOKIE_PREFIX}${consentId}`
}

/**
 * The Set-Cookie of a new flow: HttpOnly (no script reads it), SameSite=Lax (sent
 * on the bank's top-level redirect, not on cross-site subrequests), Secure unless
 * the gateway is plain HTTP on loopback (development), Path = the callback only.
 */
export function setCookie(consentId: string, secret: string, options: { secure: boolean; maxAgeS: number }): string {
  return [
    `${cookieName(consentId)}=${secret}`,
    `Path=${CALLBACK_PATH}`,
    `Max-Age=${options.maxAgeS}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ')
}

/** Expires the cookie of a finished flow. */
export function clearCookie(consentId: string, options: { secure: boolean }): string {
  return [
    `${cookieName(consentId)}=`,
    `Path=${CALLBACK_PATH}`,
    'Max-Age=0',
    'HttpOnly',
    'SameSite=Lax',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ')
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
