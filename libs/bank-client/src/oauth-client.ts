import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { BankTransport } from './bank-transport.ts'
import type { ContractDriftListener } from '@tep/observability'
import { BankAuthorizationCallbackError, BankInvalidArgumentError } from './errors.ts'
import { BANK_SCOPES, type BankScope, type TokenSet } from './model/tokens.ts'
import { readTokenAnswer } from './token-response.ts'

export { AISP_CONSENT_DAYS } from './token-response.ts'

export interface OAuthClientOptions {
  /** The transport of each scope's authorization interface (they may be separate providers). */
  transports: Readonly<Record<BankScope, BankTransport>>
  clientId: string
  clientSecret: string
  /** The registered redirect URI (used when a call does not name another). */
  redirectUri: string
  authorizePath: string
  tokenPath: string
  now: () => Date
  /** Access-token lifetime when the token answer gives none (DEFAULT_ACCESS_TOKEN_LIFETIME_MS). */
  defaultAccessTokenLifetimeMs: number
  onContractDrift: ContractDriftListener
}

export interface AuthorizationUrlRequest {
  scope: BankScope
  /** CSRF protection: an unguessable value bound to the user's session; see `generateState`. */
  state: string
  redirectUri?: string
  /**
   * PKCE (RFC 7636) S256 challenge: base64url(SHA-256(code_verifier)), see `createPkcePair`.
   * The same flow's exchangeCode must then send the verifier.
   */
  codeChallenge?: string
}

/** A PKCE S256 pair: keep `verifier` with the user's session, send `challenge` with the authorization URL. */
export function createPkcePair(verifier = randomBytes(32).toString('base64url')): {
  verifier: string
  challenge: string
} {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) {
    throw new BankInvalidArgumentError('codeVerifier', 'a PKCE code verifier is 43-128 characters of A-Z a-z 0-9 - . _ ~')
  }
  return { verifier, challenge: createHash('sha256').update(verifier, 'ascii').digest('base64url') }
}

/** A random `state` value (32 bytes, base64url). */
export function generateState(): string {
  return randomBytes(32).toString('base64url')
}

function assertScope(scope: string): asserts scope is BankScope {
  if (!(BANK_SCOPES as readonly string[]).includes(scope)) {
    throw new BankInvalidArgumentError(
      'scope',
      `scope must be one of ${BANK_SCOPES.join(', ')}, got ${JSON.stringify(scope)}`,
    )
  }
}

/**
 * The authorization interfaces (OAuth 2.0 authorization-code grant with rotating refresh
 * tokens). Stateless: tokens go back to the caller.
 */
export class OAuthClient {
  readonly #o: OAuthClientOptions

  constructor(options: OAuthClientOptions) {
    this.#o = options
  }

  /** The URL of the bank's consent pages to send the user's browser to. */
  buildAuthorizationUrl(req: AuthorizationUrlRequest): string {
    assertScope(req.scope)
    if (typeof req.state !== 'string' || req.state.length < 16) {
      throw new BankInvalidArgumentError(
        'state',
        'state must be an unguessable value of at least 16 characters (use generateState())',
      )
    }
    return this.#o.transports[req.scope]
      .url(this.#o.authorizePath, {
        response_type: 'code',
        client_id: this.#o.clientId,
        redirect_uri: req.redirectUri ?? this.#o.redirectUri,
        scope: req.scope,
        state: req.state,
        ...(req.codeChallenge === undefined
          ? {}
          : { code_challenge: req.codeChallenge, code_challenge_method: 'S256' }),
      })
      .toString()
  }

  /**
   * Reads the redirect back from the bank: checks `state` (constant time) and returns the
   * authorization code, or throws AUTHORIZATION_DENIED / AUTHORIZATION_STATE_MISMATCH /
   * AUTHORIZATION_CALLBACK_INVALID.
   */
  parseCallback(callbackUrl: string | URL, expectedState: string): { code: string } {
    let url: URL
    try {
      url = new URL(String(callbackUrl))
    } catch {
      throw new BankAuthorizationCallbackError(
        'AUTHORIZATION_CALLBACK_INVALID',
        'authorization callback is not an absolute URL',
      )
    }
    const state = url.searchParams.get('state') ?? ''
    const a = Buffer.from(state)
    const b = Buffer.from(expectedState)
    if (a.length !== b.length || !timingSafeEqual(a, b)) {
      throw new BankAuthorizationCallbackError(
        'AUTHORIZATION_STATE_MISMATCH',
        'authorization callback state does not match the one sent: possible CSRF or a stale browser tab; start the consent again',
      )
    }
    const error = url.searchParams.get('error')
    if (error !== null) {
      const description = url.searchParams.get('error_description')
      const code = error === 'access_denied' ? 'AUTHORIZATION_DENIED' : 'AUTHORIZATION_CALLBACK_INVALID'
      throw new BankAuthorizationCallbackError(
        code,
        `the bank ended the authorization with ${error}${description ? `: ${description}` : ''}`,
        { oauthError: error },
      )
    }
    const code = url.searchParams.get('code')
    if (!code)
      throw new BankAuthorizationCallbackError(
        'AUTHORIZATION_CALLBACK_INVALID',
        'authorization callback carries neither code nor error',
      )
    return { code }
  }

  /** Exchanges an authorization code for the first token pair of a consent. */
  async exchangeCode(
    code: string,
    options: { scope: BankScope; redirectUri?: string; signal?: AbortSignal; codeVerifier?: string },
  ): Promise<TokenSet> {
    assertScope(options.scope)
    if (!code) throw new BankInvalidArgumentError('code', 'authorization code is empty')
    const form: Record<string, string> = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: options.redirectUri ?? this.#o.redirectUri,
      client_id: this.#o.clientId,
      client_secret: this.#o.clientSecret,
    }
    if (options.codeVerifier !== undefined) form.code_verifier = options.codeVerifier
    return this.#token(options.scope, form, 'authorization_code', undefined, options.signal)
  }

  /**
   * Exchanges a refresh token for a new pair. The answer holds a NEW refresh token: persist it
   * before using the new access token. Pass the previous `refreshTokenExpiresAt` so that an
   * accounts consent keeps its 90-day end when the bank does not repeat it.
   */
  async refresh(
    refreshToken: string,
    options: { scope: BankScope; refreshTokenExpiresAt?: Date | null; signal?: AbortSignal },
  ): Promise<TokenSet> {
    assertScope(options.scope)
    if (!refreshToken) throw new BankInvalidArgumentError('refreshToken', 'refresh token is empty')
    const form = {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: this.#o.clientId,
      client_secret: this.#o.clientSecret,
    }
    const tokens = await this.#token(
      options.scope,
      form,
      'refresh_token',
      options.refreshTokenExpiresAt,
      options.signal,
    )
    // RFC 6749 lets a server keep the old refresh token; COBS examples do. Keep using it then.
    return tokens.refreshToken === '' ? { ...tokens, refreshToken } : tokens
  }

  async #token(
    scope: BankScope,
    form: Record<string, string>,
    grant: TokenSet['grant'],
    previousExpiry: Date | null | undefined,
    signal: AbortSignal | undefined,
  ): Promise<TokenSet> {
    const operation = `bank.oauth.${grant === 'authorization_code' ? 'exchangeCode' : 'refresh'}`
    const result = await this.#o.transports[scope].token<unknown>(
      { operation, method: 'POST', path: this.#o.tokenPath, form, idempotent: false },
      grant,
      signal,
    )
    return readTokenAnswer(result, {
      operation,
      scope,
      grant,
      previousExpiry,
      now: this.#o.now(),
      defaultAccessTokenLifetimeMs: this.#o.defaultAccessTokenLifetimeMs,
      onDrift: this.#o.onContractDrift,
    })
  }
}
