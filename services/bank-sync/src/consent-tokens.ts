/**
 * A consent's bank tokens across a sync: opened and resealed with the active key,
 * refreshed ahead of expiry (the rotated pair committed before it is used), kept in
 * memory when that commit fails and written as soon as Kafka takes writes, and
 * dropped when the consent ends.
 */
import { BankConsentRevokedError, type BankScope } from '@tep/bank-client'
import { errorCode } from '@tep/errors'
import type { Consent } from '@tep/schemas'
import type { TokenCipher } from '@tep/token-cipher'
import { openConsentToken, resealConsentToken, sealConsentToken } from './consent-binding.ts'
import { SYNCING_STATUSES } from './consent-status.ts'
import { PartitionFencedError } from './errors.ts'
import type { SyncDeps, SyncOutcome } from './sync-deps.ts'

export interface Tokens {
  accessToken: string
  refreshToken: string
}

function scopeOf(consent: Consent): BankScope {
  const s = consent.scopes[0]
  return s === 'PISP' || s === 'CISP' ? s : 'AISP'
}

export function openTokens(consent: Consent, cipher: TokenCipher): Tokens & { legacyBinding: boolean } {
  if (consent.accessToken === null || consent.refreshToken === null) {
    throw new Error(`consent ${consent.consentId} is ${consent.status} but has no tokens`)
  }
  const access = openConsentToken(cipher, consent.accessToken, consent)
  const refresh = openConsentToken(cipher, consent.refreshToken, consent)
  return { accessToken: access.token, refreshToken: refresh.token, legacyBinding: access.legacy || refresh.legacy }
}

/**
 * Key rotation and binding migration: tokens sealed with a key that is no longer the
 * active one, or with the legacy binding (consentId only), are sealed again with the
 * active key and the customer binding in the sync's own write, so after one sync round
 * no consent needs the old key or the legacy binding (docs/security.md).
 */
export function resealed(consent: Consent, cipher: TokenCipher): Consent {
  const again = (envelope: string | null): string | null =>
    envelope === null ? null : resealConsentToken(cipher, envelope, consent)
  return { ...consent, accessToken: again(consent.accessToken), refreshToken: again(consent.refreshToken) }
}

export function endTokens(consent: Consent): Consent {
  return { ...consent, accessToken: null, refreshToken: null, accessTokenExpiresAt: null }
}

/** The consents topic refused a rotated token pair's write (broker outage...). */
export class TokensNotSavedError extends Error {
  override readonly cause: unknown
  constructor(cause: unknown) {
    super('the rotated tokens could not be written to the consents topic', { cause })
    this.cause = cause
  }
}

/** An outage pauses the consent (with the rotated tokens kept in memory); it never ends it. */
export function tokensNotSaved(consent: Consent, err: unknown, deps: SyncDeps): SyncOutcome {
  const code = errorCode(err)
  deps.metrics.apiErrors.inc({ code })
  deps.logger.warn(
    { consentId: consent.consentId, code, err },
    'cannot write the rotated bank tokens to the consents topic (Kafka unavailable?): this consent pauses; ' +
      'the tokens are kept in memory and written as soon as Kafka takes writes again',
  )
  return { kind: 'backoff', code, retryAfterMs: undefined, error: err }
}

export type UnsavedTokensWrite =
  /** Nothing kept for this consent (or the kept pair was outdated and is dropped). */
  | { kind: 'none' }
  | { kind: 'written'; consent: Consent }
  /** The consent became terminal meanwhile: the kept pair is dropped, nothing written. */
  | { kind: 'ended' }
  /** Kafka still refuses the write: the pair stays kept. */
  | { kind: 'failed'; error: unknown }

/**
 * Writes the rotated token pair kept for this consent (`unsavedTokens`), alone: no bank
 * call, no transactions. The sync calls it first; the partition owner also calls it on
 * its own short retry (as soon as Kafka takes writes again, not only at the consent's
 * next sync, which a backoff can put minutes away) and before it gives the partition up:
 * until this write lands, the stored refresh token is the rotated-out one, and whoever
 * syncs the consent next from the topic (another instance after a rebalance, or this one
 * after a restart) holds no working refresh token.
 * Throws PartitionFencedError (another instance owns the partition now).
 */
export async function writeUnsavedTokens(consent: Consent, deps: SyncDeps): Promise<UnsavedTokensWrite> {
  const unsaved = deps.unsavedTokens.get(consent.consentId)
  if (unsaved === undefined) return { kind: 'none' }
  if (consent.refreshToken !== unsaved.basedOn) {
    // Written after all (a commit reported failed but landed), or the consent was granted anew.
    deps.unsavedTokens.delete(consent.consentId)
    return { kind: 'none' }
  }
  if (!SYNCING_STATUSES.has(consent.status)) {
    // Ended (by the customer, the bank or time): its tokens are dropped, never written back.
    deps.unsavedTokens.delete(consent.consentId)
    return { kind: 'ended' }
  }
  let written: Consent | null
  try {
    written = await deps.commit({
      consent: { ...consent, ...unsaved.fields },
      bankTransactions: [],
      rawTransactions: [],
      reason: 'TOKEN_REFRESH',
    })
  } catch (err) {
    if (err instanceof PartitionFencedError) throw err
    return { kind: 'failed', error: err }
  }
  deps.unsavedTokens.delete(consent.consentId)
  if (written === null) return { kind: 'ended' }
  deps.logger.info({ consentId: consent.consentId }, 'rotated tokens kept in memory are now written; syncing resumes')
  return { kind: 'written', consent: written }
}

/**
 * Refreshes ahead of expiry. The bank rotates the refresh token (the old one works
 * only for a short grace, 60 s at the simulator), so the new pair is committed to the
 * consents topic BEFORE the new access token is used. If that write fails, the pair
 * is kept in `unsavedTokens` and written as soon as Kafka takes it (the partition owner's
 * short retry, its stop before giving the partition up, or else first thing in the next
 * sync): refreshing again from the stored (rotated-out) token is refused by the bank.
 */
export async function ensureFreshAccessToken(
  consent: Consent,
  tokens: Tokens,
  deps: SyncDeps,
  force: boolean,
): Promise<{ consent: Consent; tokens: Tokens } | null> {
  const now = deps.now()
  const expiresAt = consent.accessTokenExpiresAt
  if (!force && expiresAt !== null && expiresAt - now > deps.settings.refreshMarginMs)
    return { consent, tokens }
  let next
  try {
    next = await deps.bank.authorization.refresh(tokens.refreshToken, {
      scope: scopeOf(consent),
      refreshTokenExpiresAt:
        consent.refreshTokenExpiresAt === null ? null : new Date(consent.refreshTokenExpiresAt),
    })
  } catch (err) {
    // `refused`, not `revoked`: the bank refused the refresh token, and whether that ends the
    // consent (revoked, 90 days) or only pauses it (a token rotated out by a refresh whose pair
    // was never written) is the verdict's, counted apart (revocations, REFRESH_TOKEN_REFUSED).
    deps.metrics.tokenRefreshes.inc({
      outcome: err instanceof BankConsentRevokedError ? 'refused' : 'failed',
    })
    throw err
  }
  const sealed: Consent = {
    ...consent,
    accessToken: sealConsentToken(deps.cipher, next.accessToken, consent),
    refreshToken: sealConsentToken(deps.cipher, next.refreshToken, consent),
    accessTokenExpiresAt: next.accessTokenExpiresAt.getTime(),
    refreshTokenExpiresAt: next.refreshTokenExpiresAt?.getTime() ?? consent.refreshTokenExpiresAt,
    tokenIssuedAt: next.obtainedAt.getTime(),
  }
  deps.metrics.tokenRefreshes.inc({ outcome: 'ok' })
  deps.unsavedTokens.set(consent.consentId, {
    basedOn: consent.refreshToken,
    fields: {
      accessToken: sealed.accessToken,
      refreshToken: sealed.refreshToken,
      accessTokenExpiresAt: sealed.accessTokenExpiresAt,
      refreshTokenExpiresAt: sealed.refreshTokenExpiresAt,
      tokenIssuedAt: sealed.tokenIssuedAt,
    },
  })
  let written: Consent | null
  try {
    written = await deps.commit({
      consent: sealed,
      bankTransactions: [],
      rawTransactions: [],
      reason: 'TOKEN_REFRESH',
    })
  } catch (err) {
    if (err instanceof PartitionFencedError) throw err
    throw new TokensNotSavedError(err)
  }
  deps.unsavedTokens.delete(consent.consentId)
  if (written === null) return null
  return { consent: written, tokens: { accessToken: next.accessToken, refreshToken: next.refreshToken } }
}

/** A token pair from the code exchange, still inside the bank's freshness window. */
export function hasFreshToken(consent: Consent, now: number, freshTokenMs: number): boolean {
  return (
    consent.grantedAt !== null &&
    consent.tokenIssuedAt !== null &&
    consent.tokenIssuedAt === consent.grantedAt &&
    now - consent.grantedAt < freshTokenMs
  )
}
