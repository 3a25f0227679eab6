import { AISP_CONSENT_DAYS, type TokenSet } from '@tep/bank-client'
import type { Consent } from '@tep/schemas'
import type { TokenCipher } from '@tep/token-cipher'
import type { AuthorizationStateClaims } from './authorization-state.ts'
import { sealConsentToken } from './consent-binding.ts'

const DAY_MS = 86_400_000

/**
 * The consent record a completed code exchange creates: ACTIVE, tokens sealed to
 * this consent and customer (so the record cannot be moved to another customer),
 * and its end the refresh token's expiry or, when the bank gives none, the
 * regulatory 90 days from the grant.
 */
export function grantedConsent(tokens: TokenSet, claims: AuthorizationStateClaims, cipher: TokenCipher, now: number): Consent {
  const grantedAt = tokens.obtainedAt.getTime()
  return {
    consentId: claims.consentId,
    customerId: claims.customerId,
    bank: null,
    status: 'ACTIVE',
    statusReason: 'GRANTED',
    scopes: [tokens.scope],
    accessToken: sealConsentToken(cipher, tokens.accessToken, claims),
    refreshToken: sealConsentToken(cipher, tokens.refreshToken, claims),
    accessTokenExpiresAt: tokens.accessTokenExpiresAt.getTime(),
    refreshTokenExpiresAt: tokens.refreshTokenExpiresAt?.getTime() ?? null,
    tokenIssuedAt: grantedAt,
    grantedAt,
    expiresAt: tokens.refreshTokenExpiresAt?.getTime() ?? grantedAt + AISP_CONSENT_DAYS * DAY_MS,
    expiryNotifiedAt: null,
    authorizationStateHash: null,
    accounts: [],
    version: 1,
    updatedAt: now,
  }
}
