import { createHash, randomBytes } from 'node:crypto'
import { BankApiError, OAuthError } from '../errors.ts'
import type { SimClock } from '../core/sim-clock.ts'

export const SCOPES = ['AISP', 'PISP', 'CISP'] as const
export type Scope = (typeof SCOPES)[number]

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value)
}

/** Token rules as data (ASSUMPTION values documented in the README and the OpenAPI document). */
export interface TokenPolicy {
  accessTokenTtlMs: number
  authorizationCodeTtlMs: number
  /** AISP refresh tokens die this long after the consent was granted. */
  aispConsentTtlMs: number
  /** How long a rotated-out refresh token still works, unless the new pair is used first. */
  refreshGraceMs: number
  /** A token from the code exchange younger than this may read history older than 90 days. */
  freshTokenWindowMs: number
}

export const DEFAULT_TOKEN_POLICY: TokenPolicy = {
  accessTokenTtlMs: 3_600_000,
  authorizationCodeTtlMs: 60_000,
  aispConsentTtlMs: 90 * 86_400_000,
  refreshGraceMs: 60_000,
  freshTokenWindowMs: 15 * 60_000,
}

export interface Consent {
  id: string
  clientId: string
  userId: string
  scope: Scope
  accountIds: string[]
  grantedAt: number
  /** AISP only: end of the refresh token's 90-day life. */
  expiresAt?: number
  revokedAt?: number
  revokeReason?: string
  /** Bumped by every refresh; access tokens remember the generation that issued them. */
  generation: number
  refreshToken?: string
  previousRefresh?: { token: string; graceUntil: number }
  /** True once the authorization code was exchanged (a consent without tokens yet is pending). */
  exchanged: boolean
}

interface CodeRecord {
  consentId: string
  clientId: string
  redirectUri: string | undefined
  /** PKCE S256 challenge of the authorization request; the exchange must send its verifier. */
  codeChallenge: string | undefined
  expiresAt: number
  usedAt?: number
}

export interface AccessTokenRecord {
  consentId: string
  issuedAt: number
  expiresAt: number
  /** Obtained by the authorization-code exchange (not by refresh). */
  viaCode: boolean
  generation: number
}

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token: string
  refresh_token_expires_in?: number
  scope: Scope
  consent_id: string
}

export interface Authenticated {
  consent: Consent
  token: AccessTokenRecord
  /** The token may read history older than 90 days. */
  fresh: boolean
}

function opaque(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`
}

function unauthorized(reason: string, message: string): BankApiError {
  return new BankApiError(401, { error: 'UNAUTHORISED', parameters: { REASON: reason }, message }, {
    'www-authenticate': `Bearer error="invalid_token", error_description="${message.replaceAll('"', "'")}"`,
  })
}

/**
 * Consents, authorization codes and tokens with the bank's rules: single-use
 * 60-second codes, 3600-second access tokens, refresh with rotation, AISP consents
 * that end 90 days after the grant, CISP and PISP consents that end only by
 * revocation. All times come from the simulator clock.
 */
export class TokenService {
  readonly #clock: SimClock
  readonly policy: TokenPolicy
  readonly #consents = new Map<string, Consent>()
  readonly #codes = new Map<string, CodeRecord>()
  readonly #access = new Map<string, AccessTokenRecord>()
  readonly #refresh = new Map<string, string>()
  #consentSeq = 0
  readonly counters = { codesIssued: 0, codeExchanges: 0, refreshes: 0, revocations: 0, invalidGrants: 0 }

  constructor(clock: SimClock, policy: Partial<TokenPolicy> = {}) {
    this.#clock = clock
    this.policy = { ...DEFAULT_TOKEN_POLICY, ...policy }
  }

  /** Records a granted consent and returns a fresh authorization code for it. */
  grant(input: { clientId: string; userId: string; scope: Scope; accountIds: string[]; redirectUri: string | undefined; codeChallenge?: string | undefined }): { code: string; consent: Consent; expiresInSeconds: number } {
    const now = this.#clock.now()
    const consent: Consent = {
      id: `cns-${(++this.#consentSeq).toString().padStart(6, '0')}-${randomBytes(4).toString('hex')}`,
      clientId: input.clientId,
      userId: input.userId,
      scope: input.scope,
      accountIds: [...input.accountIds],
      grantedAt: now,
      ...(input.scope === 'AISP' ? { expiresAt: now + this.policy.aispConsentTtlMs } : {}),
      generation: 0,
      exchanged: false,
    }
    this.#consents.set(consent.id, consent)
    const code = opaque('ac_')
    this.#codes.set(code, { consentId: consent.id, clientId: input.clientId, redirectUri: input.redirectUri, codeChallenge: input.codeChallenge, expiresAt: now + this.policy.authorizationCodeTtlMs })
    this.counters.codesIssued++
    return { code, consent, expiresInSeconds: Math.round(this.policy.authorizationCodeTtlMs / 1000) }
  }

  exchangeCode(input: { code: string; clientId: string; redirectUri: string | undefined; codeVerifier?: string | undefined }): TokenResponse {
    const now = this.#clock.now()
    const record = this.#codes.get(input.code)
    if (!record) throw this.#invalidGrant('authorization code is unknown')
    const consent = this.#consents.get(record.consentId)
    if (!consent) throw this.#invalidGrant('authorization code is unknown')
    if (record.usedAt !== undefined) {
      // RFC 6749 §4.1.2: a code used twice suggests theft; what it issued is revoked.
      this.#revoke(consent, 'AUTHORIZATION_CODE_REUSED')
      throw this.#invalidGrant('authorization code was already used; the tokens issued from it are revoked')
    }
    if (record.clientId !== input.clientId) throw this.#invalidGrant('authorization code was issued to another client')
    if (now > record.expiresAt) throw this.#invalidGrant(`authorization code expired (codes live ${Math.round(this.policy.authorizationCodeTtlMs / 1000)} s)`)
    if (record.redirectUri !== undefined && record.redirectUri !== input.redirectUri) {
      throw this.#invalidGrant('redirect_uri does not match the one of the authorization request')
    }
    if (consent.revokedAt !== undefined) throw this.#invalidGrant('consent was revoked')
    if (record.codeChallenge !== undefined || input.codeVerifier !== undefined) {
      // RFC 7636 §4.6: a code bound to a challenge is only exchanged with its verifier
      // (and a verifier without a challenge is a client bug worth refusing).
      if (record.codeChallenge === undefined) throw this.#invalidGrant('code_verifier sent, but the authorization request had no code_challenge')
      if (input.codeVerifier === undefined) throw this.#invalidGrant('code_verifier is required: the authorization request sent a code_challenge')
      if (!PKCE_VERIFIER.test(input.codeVerifier) || s256(input.codeVerifier) !== record.codeChallenge) throw this.#invalidGrant('code_verifier does not match the code_challenge')
    }
    record.usedAt = now
    consent.exchanged = true
    this.counters.codeExchanges++
    return this.#issue(consent, true)
  }

  refresh(input: { refreshToken: string; clientId: string }): TokenResponse {
    const now = this.#clock.now()
    const consentId = this.#refresh.get(input.refreshToken)
    const consent = consentId === undefined ? undefined : this.#consents.get(consentId)
    if (!consent) throw this.#invalidGrant('refresh token is unknown')
    if (consent.clientId !== input.clientId) throw this.#invalidGrant('refresh token was issued to another client')
    if (consent.revokedAt !== undefined) throw this.#invalidGrant('consent was revoked; start the consent flow again')
    if (consent.expiresAt !== undefined && now >= consent.expiresAt) throw this.#invalidGrant('consent expired (accounts consents last 90 days); start the consent flow again')
    const isCurrent = consent.refreshToken === input.refreshToken
    const inGrace = consent.previousRefresh?.token === input.refreshToken && now < consent.previousRefresh.graceUntil
    if (!isCurrent && !inGrace) throw this.#invalidGrant('refresh token was rotated out; use the newest refresh token')
    // Rotated-out tokens stay in the index so a late use is told "rotated out", not "unknown".
    if (isCurrent) consent.previousRefresh = { token: input.refreshToken, graceUntil: now + this.policy.refreshGraceMs }
    consent.generation++
    this.counters.refreshes++
    return this.#issue(consent, false)
  }

  /** Checks a bearer token for an API call; throws the 401 the bank would answer. */
  authenticate(accessToken: string | undefined): Authenticated {
    const now = this.#clock.now()
    if (accessToken === undefined || accessToken === '') throw unauthorized('TOKEN_MISSING', 'Authorization: Bearer <access token> is required')
    const token = this.#access.get(accessToken)
    const consent = token === undefined ? undefined : this.#consents.get(token.consentId)
    if (!token || !consent) throw unauthorized('TOKEN_UNKNOWN', 'access token is unknown')
    if (consent.revokedAt !== undefined) throw unauthorized('TOKEN_REVOKED', 'consent was revoked; start the consent flow again')
    if (consent.expiresAt !== undefined && now >= consent.expiresAt) throw unauthorized('CONSENT_EXPIRED', 'consent expired (accounts consents last 90 days); start the consent flow again')
    if (now >= token.expiresAt) throw unauthorized('TOKEN_EXPIRED', 'access token expired; refresh it')
    if (token.generation === consent.generation && consent.previousRefresh) {
      // The new pair is in use, so the client has it: the old refresh token's grace ends.
      delete consent.previousRefresh
    }
    return { consent, token, fresh: token.viaCode && now - token.issuedAt < this.policy.freshTokenWindowMs }
  }

  revokeConsent(consentId: string, reason = 'REVOKED_BY_USER'): Consent | undefined {
    const consent = this.#consents.get(consentId)
    if (consent) this.#revoke(consent, reason)
    return consent
  }

  /** The consent behind an access or refresh token. */
  consentOfToken(token: string): Consent | undefined {
    const id = this.#access.get(token)?.consentId ?? this.#refresh.get(token)
    return id === undefined ? undefined : this.#consents.get(id)
  }

  clear(): void {
    this.#consents.clear()
    this.#codes.clear()
    this.#access.clear()
    this.#refresh.clear()
  }

  consents(): Consent[] {
    return [...this.#consents.values()]
  }

  consent(id: string): Consent | undefined {
    return this.#consents.get(id)
  }

  #revoke(consent: Consent, reason: string): void {
    if (consent.revokedAt !== undefined) return
    consent.revokedAt = this.#clock.now()
    consent.revokeReason = reason
    this.counters.revocations++
  }

  #invalidGrant(description: string): OAuthError {
    this.counters.invalidGrants++
    return new OAuthError(401, 'invalid_grant', description)
  }

  #issue(consent: Consent, viaCode: boolean): TokenResponse {
    const now = this.#clock.now()
    const access = opaque('at_')
    const refresh = opaque('rt_')
    this.#access.set(access, { consentId: consent.id, issuedAt: now, expiresAt: now + this.policy.accessTokenTtlMs, viaCode, generation: consent.generation })
    this.#refresh.set(refresh, consent.id)
    consent.refreshToken = refresh
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: Math.round(this.policy.accessTokenTtlMs / 1000),
      refresh_token: refresh,
      ...(consent.expiresAt !== undefined ? { refresh_token_expires_in: Math.max(0, Math.round((consent.expiresAt - now) / 1000)) } : {}),
      scope: consent.scope,
      consent_id: consent.id,
    }
  }
}

/** RFC 7636 §4.1: 43-128 characters of [A-Z a-z 0-9 - . _ ~]. */
const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url')
}
