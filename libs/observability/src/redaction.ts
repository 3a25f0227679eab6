/**
 * Deep redaction of log lines. pino's `redact` paths are exact (one wildcard per
 * segment), so a token three levels down, or a card number inside an error
 * message, slipped through. This walks what is logged: values under sensitive
 * keys are replaced at any depth, and card numbers (PANs) and IBANs inside any
 * string are masked, keeping just enough to correlate (BIN and last four, the
 * country and last four).
 */

import { maskIbansCounted } from './iban-masking.ts'
import { maskPansCounted } from './pan-masking.ts'

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

/**
 * Masks IBANs (country and last four kept, iban-masking.ts) and card numbers (BIN
 * and last four kept, as PCI DSS allows; pan-masking.ts) inside a string, in place.
 * The one text masker of logs, /readyz, DLQ reasons and API reject reasons.
 */
export function maskSensitiveText(text: string): string {
  return maskSensitiveTextCounted(text).text
}

/** maskSensitiveText, and how many card numbers and IBANs it masked. */
export function maskSensitiveTextCounted(text: string): { text: string; pans: number; ibans: number } {
  if (text.length < 13) return { text, pans: 0, ibans: 0 }
  // IBANs first: their digits may hold a Luhn-valid window, which would leave the
  // IBAN half masked and no longer recognised.
  const ibans = maskIbansCounted(text)
  const pans = maskPansCounted(ibans.text)
  return { text: pans.text, pans: pans.masked, ibans: ibans.masked }
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
