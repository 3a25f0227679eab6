import type { ContractDriftListener } from '@tep/observability'
import { BankProtocolError } from './errors.ts'
import type { BankScope, TokenSet } from './model/tokens.ts'

/** Accounts consents (and their refresh tokens) last 90 days from the grant. */
export const AISP_CONSENT_DAYS = 90
const DAY_MS = 86_400_000

/**
 * The access-token lifetime assumed when the token answer gives none (or one that is not a
 * number): the description leaves "the shape of the token response" and "the access token
 * lifetime" unshown. Short on purpose: a caller refreshes ahead of it (bank-sync: before its
 * next sync) rather than meet an expiry it was not told of, and a 401 refreshes anyway.
 */
export const DEFAULT_ACCESS_TOKEN_LIFETIME_MS = 5 * 60_000

/** The fields this client reads; anything else in the answer is reported and ignored. */
const KNOWN_FIELDS = new Set([
  'access_token',
  'token_type',
  'expires_in',
  'refresh_token',
  'scope',
  'refresh_token_expires_in',
  'consent_id',
])
/** At most this many unknown field names are reported per answer (metric labels stay few). */
const MAX_UNKNOWN_REPORTED = 10

export interface TokenAnswer {
  body: unknown
  status: number
  requestId: string
}

export interface ReadTokenOptions {
  operation: string
  scope: BankScope
  grant: TokenSet['grant']
  /** The consent's end known from an earlier answer (refresh), kept when the bank does not repeat it. */
  previousExpiry: Date | null | undefined
  now: Date
  defaultAccessTokenLifetimeMs: number
  onDrift: ContractDriftListener
}

function jsonType(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v
}

/**
 * Reads a token endpoint answer leniently (Postel's rule): only what a caller cannot work
 * without is an error naming the field (`access_token`; `refresh_token` after a code
 * exchange; a `scope` that does not grant the one asked for). Every other difference from
 * the modelled answer is normalised and reported to `onDrift`.
 */
export function readTokenAnswer(answer: TokenAnswer, o: ReadTokenOptions): TokenSet {
  const drift = (field: string, kind: string, detail?: string) =>
    o.onDrift({
      api: 'bank',
      operation: o.operation,
      field,
      kind,
      ...(detail === undefined ? {} : { detail }),
    })
  const fail = (field: string, what: string) =>
    new BankProtocolError(
      `${o.operation}: the token answer ${what}; the bank's answer cannot be used (X-Request-ID ${answer.requestId})`,
      { operation: o.operation, requestId: answer.requestId, status: answer.status, details: { field } },
    )
  const body = answer.body
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw fail('(body)', `is a JSON ${jsonType(body)}, not an object`)
  }
  const b = body as Record<string, unknown>

  const access = b.access_token
  if (typeof access !== 'string' || access === '') {
    throw fail(
      'access_token',
      access === undefined
        ? 'lacks access_token'
        : `has an access_token that is a ${jsonType(access)} (${access === '' ? 'empty' : 'not a string'})`,
    )
  }
  const refresh = b.refresh_token
  if (refresh !== undefined && refresh !== null && typeof refresh !== 'string') {
    throw fail('refresh_token', `has a refresh_token that is a ${jsonType(refresh)}, not a string`)
  }
  if (o.grant === 'authorization_code' && (typeof refresh !== 'string' || refresh === '')) {
    // Without it the consent ends with the first access token: nothing to keep.
    throw fail('refresh_token', 'of the code exchange lacks refresh_token')
  }
  if (o.grant === 'refresh_token' && (typeof refresh !== 'string' || refresh === '')) {
    // RFC 6749 §6 lets the server keep the old refresh token; the caller keeps using it.
    drift('refresh_token', 'absent')
  }

  checkScope(b.scope, o.scope, drift, fail)

  const expiresIn = seconds(b.expires_in, 'expires_in', drift)
  const lifetimeMs = expiresIn === undefined ? o.defaultAccessTokenLifetimeMs : expiresIn * 1000
  const refreshExpiresIn =
    b.refresh_token_expires_in === undefined
      ? undefined
      : seconds(b.refresh_token_expires_in, 'refresh_token_expires_in', drift)

  let tokenType = 'Bearer'
  if (typeof b.token_type === 'string') tokenType = b.token_type
  else if (b.token_type !== undefined) drift('token_type', 'type', jsonType(b.token_type))

  let consentId: string | undefined
  if (typeof b.consent_id === 'string') consentId = b.consent_id
  else if (typeof b.consent_id === 'number' && Number.isFinite(b.consent_id)) {
    consentId = String(b.consent_id)
    drift('consent_id', 'type', 'number')
  } else if (b.consent_id !== undefined && b.consent_id !== null)
    drift('consent_id', 'type', jsonType(b.consent_id))

  const unknown = Object.keys(b).filter((k) => !KNOWN_FIELDS.has(k))
  for (const name of unknown.slice(0, MAX_UNKNOWN_REPORTED)) {
    drift(/^[A-Za-z0-9_.-]{1,64}$/.test(name) ? name : '(unprintable)', 'unknown-field')
  }

  const now = o.now
  return {
    accessToken: access,
    tokenType,
    scope: o.scope,
    accessTokenExpiresAt: new Date(now.getTime() + lifetimeMs),
    refreshToken: typeof refresh === 'string' ? refresh : '',
    refreshTokenExpiresAt: refreshExpiry(o.scope, o.grant, refreshExpiresIn, o.previousExpiry, now),
    obtainedAt: now,
    grant: o.grant,
    consentId,
  }
}

/**
 * A lifetime in seconds: a JSON number as modelled, a string holding a number read as that
 * number; absent, negative or anything else is undefined (the caller's default). Each
 * deviation reported.
 */
function seconds(
  v: unknown,
  field: string,
  drift: (field: string, kind: string, detail?: string) => void,
): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v
  if (v === undefined || v === null) {
    drift(field, 'absent')
    return undefined
  }
  if (typeof v === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(v)) {
    drift(field, 'type', 'numeric string')
    return Number(v)
  }
  drift(field, 'type', typeof v === 'number' ? 'negative or not finite' : jsonType(v))
  return undefined
}

/**
 * RFC 6749 §3.3: a space-delimited list, order without meaning, and §5.1 lets the server
 * grant a different scope. Accepted when the list holds the scope asked for (in any order,
 * with others); refused when it does not: every call would then be refused (403).
 */
function checkScope(
  granted: unknown,
  asked: BankScope,
  drift: (field: string, kind: string, detail?: string) => void,
  fail: (field: string, what: string) => BankProtocolError,
): void {
  if (granted === undefined || granted === null || granted === asked) return
  let list: string[]
  if (typeof granted === 'string') list = granted.split(/\s+/).filter((s) => s !== '')
  else if (Array.isArray(granted) && granted.every((s) => typeof s === 'string')) {
    drift('scope', 'type', 'array')
    list = granted as string[]
  } else throw fail('scope', `has a scope that is a ${jsonType(granted)}`)
  if (!list.includes(asked)) {
    throw fail('scope', `grants scope ${JSON.stringify(list.join(' '))}, not the ${asked} asked for`)
  }
  if (list.length > 1) drift('scope', list[0] === asked ? 'superset' : 'superset-reordered')
}

function refreshExpiry(
  scope: BankScope,
  grant: TokenSet['grant'],
  expiresIn: number | undefined,
  previous: Date | null | undefined,
  now: Date,
): Date | null {
  if (expiresIn !== undefined) return new Date(now.getTime() + expiresIn * 1000)
  if (scope !== 'AISP') return null
  if (previous !== undefined) return previous
  // A new accounts consent: the 90 days start now.
  return grant === 'authorization_code' ? new Date(now.getTime() + AISP_CONSENT_DAYS * DAY_MS) : null
}
