import { randomBytes, randomUUID } from 'node:crypto'
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose'
import { ApiError } from '../errors.ts'
import type { Principal, Scope } from './credentials.ts'
import { SCOPES } from './credentials.ts'
import type { SimClock } from './sim-clock.ts'

/** The spec's token lifetime. */
export const TOKEN_TTL_SECONDS = 300
const ISSUER = 'enrichment-sim'
const VERIFIED_CACHE_LIMIT = 10_000

interface VerifiedToken {
  principal: Principal
  exp: number
  generation: number
}

/**
 * Issues and checks access tokens: HS256 JWTs signed with a per-process secret,
 * `exp = iat + 300` in simulator time. Revocation bumps a generation number that
 * every token carries, so all tokens issued before it stop working at once (what
 * a key rotation or a credential reset does on the real service).
 */
export class TokenService {
  readonly #key = new Uint8Array(randomBytes(32))
  readonly #clock: SimClock
  #generation = 1
  // Verifying a signature on every lookup would dominate the hot path; a verified
  // token is remembered and only its expiry and generation are re-checked.
  readonly #verified = new Map<string, VerifiedToken>()

  constructor(clock: SimClock) {
    this.#clock = clock
  }

  async issue(clientId: string, scopes: readonly Scope[]): Promise<{ token: string; expiresIn: number; scope: string }> {
    const iat = Math.floor(this.#clock.now() / 1000)
    const scope = scopes.join(' ')
    const token = await new SignJWT({ scope, gen: this.#generation })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(clientId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + TOKEN_TTL_SECONDS)
      .setJti(randomUUID())
      .sign(this.#key)
    return { token, expiresIn: TOKEN_TTL_SECONDS, scope }
  }

  /** Every token issued so far stops working. */
  revokeAll(): void {
    this.#generation++
    this.#verified.clear()
  }

  /** The principal of a valid token, or a 401 ApiError saying why not. */
  async verify(token: string): Promise<Principal> {
    const cached = this.#verified.get(token)
    if (cached !== undefined) return this.#checkLive(cached)
    let payload
    try {
      ;({ payload } = await jwtVerify(token, this.#key, { issuer: ISSUER, algorithms: ['HS256'], currentDate: new Date(this.#clock.now()) }))
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw unauthorized('TOKEN_EXPIRED', 'the access token has expired; request a new one from the token endpoint')
      throw unauthorized('INVALID_TOKEN', 'the access token is malformed or its signature is not valid')
    }
    const scopes = String(payload.scope ?? '')
      .split(' ')
      .filter((s): s is Scope => (SCOPES as readonly string[]).includes(s))
    const verified: VerifiedToken = { principal: { key: `client:${payload.sub ?? ''}`, scopes }, exp: Number(payload.exp), generation: Number(payload.gen) }
    if (this.#verified.size >= VERIFIED_CACHE_LIMIT) this.#verified.clear()
    this.#verified.set(token, verified)
    return this.#checkLive(verified)
  }

  #checkLive(token: VerifiedToken): Principal {
    if (token.generation !== this.#generation) throw unauthorized('TOKEN_REVOKED', 'the access token has been revoked; request a new one from the token endpoint')
    // jose allows no clock tolerance here either: exp is exclusive.
    if (Math.floor(this.#clock.now() / 1000) >= token.exp) throw unauthorized('TOKEN_EXPIRED', 'the access token has expired; request a new one from the token endpoint')
    return token.principal
  }
}

export function unauthorized(code: string, message: string): ApiError {
  return new ApiError(401, code, message, { headers: { 'www-authenticate': `Bearer realm="enrichment-sim", error="invalid_token"` } })
}
