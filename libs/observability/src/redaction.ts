/**
 * Deep redaction of log lines. pino's `redact` paths are exact (one wildcard per
 * segment), so a token three levels down, or a card number inside an error
 * message, slipped through. This walks what is logged: values under sensitive
 * keys are replaced at any depth, and card numbers (PANs) and IBANs inside any
 * string are masked, keeping just enough to correlate (BIN and last four, the
 * country and last four).
 */

import { maskPansInText } from './pan-masking.ts'

export const CENSOR = '[REDACTED]'

/** Keys (compared lower-case, without '-' and '_') whose values never reach a log. */
const SENSITIVE_KEYS = new Set(
  [
    'password',
    'passphrase',
    'secret',
    'clientSecret',
    'accessToken',
    'refreshToken',
    'idToken',
    'token',
    'authorization',
    'proxyAuthorization',
    'cookie',
    'setCookie',
    'codeVerifier',
    'apiKey',
    'privateKey',
    'pan',
    'cardNumber',
    'iban',
    'bban',
    'accountNumber',
    'debtorAccount',
    'creditorAccount',
  ].map(normalizeKey),
)

function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '')
}

export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEYS.has(normalizeKey(key))
}

/** An IBAN: country, check digits, 10-30 alphanumerics (optionally grouped by spaces). */
const IBAN_CANDIDATE = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){10,30}\b/g

/** ISO 13616 check: the first four characters moved to the end, letters as 10..35, mod 97 = 1. */
function ibanValid(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4)
  let rest = 0
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0)
    const n = code >= 65 ? code - 55 : code - 48
    rest = (n > 9 ? rest * 100 + n : rest * 10 + n) % 97
  }
  return rest === 1
}

/**
 * Masks card numbers (Luhn-valid 13-19 digits, grouped or not: BIN and last four
 * kept in place, as PCI DSS allows) and IBANs (country and last four kept) inside a string.
 */
export function maskSensitiveText(text: string): string {
  if (text.length < 13) return text
  // IBANs first: their digit groups may hold a Luhn-valid run, which would leave
  // the IBAN half masked and no longer recognised.
  const out = text.replace(IBAN_CANDIDATE, (match) => {
    const compact = match.replace(/ /g, '')
    if (!ibanValid(compact)) return match
    return `${compact.slice(0, 2)}**${'*'.repeat(compact.length - 8)}${compact.slice(-4)}`
  })
  // Card numbers in place, however they are surrounded (pan-masking.ts).
  return maskPansInText(out)
}

const MAX_DEPTH = 10

/**
 * A copy of `value` with sensitive keys censored at any depth and PANs/IBANs
 * masked in every string (class instances are copied as their own enumerable
 * fields). Errors become plain objects (type, message, stack,
 * code, cause) so their messages are masked too. Cycles and depth are bounded.
 */
export function redactDeep(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return maskSensitiveText(value)
  if (value === null || typeof value !== 'object') return value
  if (depth >= MAX_DEPTH) return '[Truncated]'
  if (seen.has(value)) return '[Circular]'
  seen.add(value)
  if (value instanceof Error) {
    const err = value as Error & { code?: unknown; cause?: unknown }
    const out: Record<string, unknown> = { type: err.name, message: maskSensitiveText(err.message) }
    if (err.stack !== undefined) out.stack = maskSensitiveText(err.stack)
    for (const [k, v] of Object.entries(err)) out[k] = isSensitiveKey(k) ? CENSOR : redactDeep(v, depth + 1, seen)
    if (err.cause !== undefined) out.cause = redactDeep(err.cause, depth + 1, seen)
    return out
  }
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, depth + 1, seen))
  // Buffers, dates, maps and the like are left to pino's own serialisation.
  if (ArrayBuffer.isView(value) || value instanceof Date || value instanceof Map || value instanceof Set) return value
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSensitiveKey(k) && v !== null && v !== undefined ? CENSOR : redactDeep(v, depth + 1, seen)
  }
  return out
}
