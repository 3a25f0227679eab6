/** The three authorization interfaces: accounts, payments, cards. */
export type BankScope = 'AISP' | 'PISP' | 'CISP'

export const BANK_SCOPES: readonly BankScope[] = ['AISP', 'PISP', 'CISP']

/**
 * Tokens from one token-endpoint answer. The client does not keep them: the caller persists
 * them (encrypted) and must persist a rotated refresh token BEFORE it uses the new access
 * token, because the bank invalidates the previous refresh token once the new pair is used.
 * Never log this object.
 */
export interface TokenSet {
  accessToken: string
  tokenType: string
  scope: BankScope
  /**
   * When the access token stops working: from `expires_in`, or DEFAULT_ACCESS_TOKEN_LIFETIME_MS
   * (option `defaultAccessTokenLifetimeMs`) after the answer when the bank did not say.
   */
  accessTokenExpiresAt: Date
  /** The refresh token to use next time: after a refresh, a NEW one (rotation). */
  refreshToken: string
  /**
   * When the refresh token (and so the consent) ends: 90 days after the consent for AISP;
   * null when it does not expire (PISP, CISP) or the bank did not say and no earlier value
   * was passed to `refresh`.
   */
  refreshTokenExpiresAt: Date | null
  /** When this answer was received (client clock). */
  obtainedAt: Date
  /** `authorization_code` tokens are "fresh" for a short time and may read history older than 90 days. */
  grant: 'authorization_code' | 'refresh_token'
  /** The bank's id of the consent, when it sends one (the simulator does). */
  consentId: string | undefined
}

/**
 * The token endpoint's JSON answer as modelled (the description does not show it). Read
 * leniently by `readTokenAnswer`: other types, absent and unknown fields are tolerated.
 */
export interface TokenResponse {
  access_token: string
  token_type: string
  expires_in: number
  refresh_token?: string
  scope?: string
  refresh_token_expires_in?: number
  consent_id?: string
}
