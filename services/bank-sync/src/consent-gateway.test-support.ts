/** What the consent-gateway unit tests share: a fixed clock and the bank's answer to an authorization code. */
import type { TokenSet } from '@tep/bank-client'

export const NOW = Date.parse('2026-05-04T08:00:00Z')

/** Tokens a bank exchanges an authorization code for at NOW: access for an hour, refresh for 90 days. */
export function exchangedTokens(overrides: Partial<TokenSet> = {}): TokenSet {
  return {
    accessToken: 'A',
    refreshToken: 'R',
    tokenType: 'Bearer',
    scope: 'AISP',
    accessTokenExpiresAt: new Date(NOW + 3_600_000),
    refreshTokenExpiresAt: new Date(NOW + 90 * 86_400_000),
    obtainedAt: new Date(NOW),
    grant: 'authorization_code',
    consentId: 'bank-consent',
    ...overrides,
  }
}
