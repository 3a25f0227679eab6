import { decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose'
import { BankSyncError } from './errors.ts'

/**
 * Who the customer is, as the consent gateway learns it: from a short-lived JWT
 * (HS256) that the bank's own backend signs for its logged-in customer with a
 * key shared with bank-sync (CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY). The gateway
 * never takes a customer id from a query string or a body: anyone can write those.
 *
 * Claims: `sub` = customer id, `aud` = the gateway's audience, `iat` and `exp`
 * (at most `maxLifetimeMs` apart), optionally `iss`. Only HS256 is accepted, so a
 * token with `alg: none` or an asymmetric algorithm is refused before its claims
 * are read.
 */
export const DEFAULT_CUSTOMER_TOKEN_AUDIENCE = 'tep-consent-gateway'
export const DEFAULT_CUSTOMER_TOKEN_MAX_LIFETIME_MS = 5 * 60_000
/** Clocks of the bank's backend and of bank-sync may differ a little. */
const CLOCK_TOLERANCE_S = 30
const CUSTOMER_ID = /^[A-Za-z0-9._:@-]{1,128}$/

export type CustomerAuthProblem = 'MISSING' | 'INVALID' | 'EXPIRED'

/** The request carries no customer token, or one the gateway cannot trust. 401. */
export class CustomerAuthError extends BankSyncError {
  readonly problem: CustomerAuthProblem

  constructor(problem: CustomerAuthProblem, message: string, cause?: unknown) {
    super(message, { code: `CUSTOMER_TOKEN_${problem}`, retriable: false, cause, details: { problem } })
    this.problem = problem
  }
}

export interface CustomerTokenOptions {
  /**
   * HMAC key, at least 32 bytes; or, for rotation, keys by id (`kid`): a token naming a `kid`
   * is checked with that key only, a token without one with each key in turn (the bank
   * application's tokens from before it named its key).
   */
  key: Buffer | ReadonlyMap<string, Buffer>
  audience?: string
  /** When set, `iss` must equal it. */
  issuer?: string
  maxLifetimeMs?: number
  now?: () => number
}

export class CustomerTokenVerifier {
  readonly #keys: ReadonlyMap<string, Uint8Array>
  readonly #audience: string
  readonly #issuer: string | undefined
  readonly #maxLifetimeS: number
  readonly #now: () => number

  constructor(options: CustomerTokenOptions) {
    const keys = Buffer.isBuffer(options.key) ? new Map([['', options.key]]) : options.key
    if (keys.size === 0) throw new RangeError('the customer token verifier needs at least one key')
    for (const k of keys.values())
      if (k.length < 32) throw new RangeError('the customer token key must have at least 32 bytes')
    this.#keys = new Map([...keys].map(([id, k]) => [id, new Uint8Array(k)]))
    this.#audience = options.audience ?? DEFAULT_CUSTOMER_TOKEN_AUDIENCE
    this.#issuer = options.issuer
    this.#maxLifetimeS = Math.floor((options.maxLifetimeMs ?? DEFAULT_CUSTOMER_TOKEN_MAX_LIFETIME_MS) / 1000)
    this.#now = options.now ?? Date.now
  }

  /** The customer id of `Authorization: Bearer <token>`, or CustomerAuthError. */
  async customerOf(authorization: string | undefined): Promise<string> {
    const token =
      authorization !== undefined && /^Bearer /i.test(authorization) ? authorization.slice(7).trim() : ''
    if (token === '') {
      throw new CustomerAuthError(
        'MISSING',
        'this call needs the customer token of the bank application: Authorization: Bearer <token>',
      )
    }
    let payload
    try {
      payload = await this.#verifyWithKeys(token)
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) {
        throw new CustomerAuthError(
          'EXPIRED',
          'the customer token has expired; the bank application must issue a new one',
          err,
        )
      }
      throw new CustomerAuthError(
        'INVALID',
        `the customer token is not valid (${err instanceof joseErrors.JOSEError ? err.code : 'unreadable'})`,
        err,
      )
    }
    return this.#subjectOf(payload)
  }

  /** The key the token's `kid` names (unknown: refused), or each key in turn when it names none. */
  async #verifyWithKeys(token: string): Promise<JWTPayload> {
    const kid = decodeProtectedHeader(token).kid
    if (kid !== undefined) {
      const key = this.#keys.get(kid)
      if (key === undefined)
        throw new joseErrors.JWSSignatureVerificationFailed(
          `no customer token key has the id of this token's kid`,
        )
      return this.#verify(token, key)
    }
    let last: unknown
    for (const key of this.#keys.values()) {
      try {
        return await this.#verify(token, key)
      } catch (err) {
        // Another key may have signed it; any other problem (expired, audience) is the token's.
        if (!(err instanceof joseErrors.JWSSignatureVerificationFailed)) throw err
        last = err
      }
    }
    throw last
  }

  async #verify(token: string, key: Uint8Array): Promise<JWTPayload> {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['HS256'],
      audience: this.#audience,
      ...(this.#issuer === undefined ? {} : { issuer: this.#issuer }),
      requiredClaims: ['sub', 'exp', 'iat'],
      clockTolerance: CLOCK_TOLERANCE_S,
      maxTokenAge: this.#maxLifetimeS + CLOCK_TOLERANCE_S,
      currentDate: new Date(this.#now()),
    })
    return payload
  }

  #subjectOf(payload: JWTPayload): string {
    if (
      typeof payload.exp === 'number' &&
      typeof payload.iat === 'number' &&
      payload.exp - payload.iat > this.#maxLifetimeS
    ) {
      throw new CustomerAuthError(
        'INVALID',
        `the customer token lives ${payload.exp - payload.iat} s; at most ${this.#maxLifetimeS} s are accepted`,
      )
    }
    const sub = payload.sub
    if (typeof sub !== 'string' || !CUSTOMER_ID.test(sub)) {
      throw new CustomerAuthError(
        'INVALID',
        'the customer token subject must be 1-128 characters of letters, digits, ".", "_", ":", "@" or "-"',
      )
    }
    return sub
  }
}

/**
 * Signs a customer token the way the bank's backend must (for tests, `npm start`
 * and as the reference of the integration): HS256, `sub`, `aud`, `iat`, `exp`.
 */
export async function mintCustomerToken(
  key: Buffer,
  customerId: string,
  options: { audience?: string; issuer?: string; lifetimeMs?: number; now?: number; kid?: string } = {},
): Promise<string> {
  const iat = Math.floor((options.now ?? Date.now()) / 1000)
  const jwt = new SignJWT({})
    .setProtectedHeader({
      alg: 'HS256',
      typ: 'JWT',
      ...(options.kid === undefined ? {} : { kid: options.kid }),
    })
    .setSubject(customerId)
    .setAudience(options.audience ?? DEFAULT_CUSTOMER_TOKEN_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + Math.floor((options.lifetimeMs ?? 2 * 60_000) / 1000))
  if (options.issuer !== undefined) jwt.setIssuer(options.issuer)
  return jwt.sign(new Uint8Array(key))
}
