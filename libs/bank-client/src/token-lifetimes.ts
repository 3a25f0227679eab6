import type { TokenSet } from './model/tokens.ts'

/** Refresh this long before the access token expires, so a call never races its expiry. */
export const DEFAULT_REFRESH_MARGIN_MS = 60_000

/** True when the access token expires within `marginMs` (default one minute): refresh before the next call. */
export function accessTokenNeedsRefresh(
  tokens: Pick<TokenSet, 'accessTokenExpiresAt'>,
  now: Date,
  marginMs = DEFAULT_REFRESH_MARGIN_MS,
): boolean {
  return tokens.accessTokenExpiresAt.getTime() - now.getTime() <= marginMs
}

/**
 * Milliseconds until the consent ends (the refresh token's end), or undefined when it does
 * not expire. bank-sync uses it to announce an expiring accounts consent ahead of time.
 */
export function consentRemainingMs(
  tokens: Pick<TokenSet, 'refreshTokenExpiresAt'>,
  now: Date,
): number | undefined {
  return tokens.refreshTokenExpiresAt === null
    ? undefined
    : tokens.refreshTokenExpiresAt.getTime() - now.getTime()
}

/** True when the consent ends within `withinMs` (or has ended). Never for consents without an end. */
export function consentExpiresWithin(
  tokens: Pick<TokenSet, 'refreshTokenExpiresAt'>,
  now: Date,
  withinMs: number,
): boolean {
  const remaining = consentRemainingMs(tokens, now)
  return remaining !== undefined && remaining <= withinMs
}
