import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'
import { ConsentStateError } from './errors.ts'

/** What the gateway binds to one authorization redirect. */
export interface AuthorizationStateClaims {
  /** The consent id the callback will write. */
  consentId: string
  customerId: string
  scope: string
  /**
   * base64url(SHA-256) of the secret kept in the starting browser's HttpOnly
   * cookie: the callback must come from that browser. It is also the PKCE S256
   * code challenge (the secret is the code verifier), so the bank checks it too.
   */
  binding: string
  /** Epoch ms after which the callback is refused. */
  expiresAt: number
  /** Random, makes every state unique (the single-use set is keyed by it). */
  nonce: string
}

export const DEFAULT_STATE_TTL_MS = 10 * 60_000
const IV_BYTES = 12
const TAG_BYTES = 16

/**
 * Derives the state-signing key from the token encryption key, so every gateway
 * instance with the same configuration verifies every other's states without a
 * shared session store, and no second secret has to be distributed.
 */
export function deriveStateKey(tokenKey: Buffer): Buffer {
  return Buffer.from(
    hkdfSync('sha256', tokenKey, Buffer.alloc(0), 'tep bank-sync authorization state v1', 32),
  )
}

/**
 * OAuth `state` values: `<base64url(iv | AES-256-GCM(JSON claims) | tag)>.<base64url(HMAC-SHA256)>`.
 * Encrypted, not only signed: the state travels to the bank and stays in the
 * browser's history, and the claims name the customer and the consent.
 *
 * Signed rather than stored so that the callback may land on any instance; the
 * single-use rule is an in-memory set of nonces per instance (a replay on another
 * instance still fails, because the bank's authorization code is single use).
 */
export class AuthorizationStateSigner {
  readonly #key: Buffer
  /** Encrypts the claims; derived from the signing key, so no second secret is configured. */
  readonly #encryptionKey: Buffer
  readonly #ttlMs: number
  readonly #now: () => number
  /** nonce → expiresAt, pruned as they expire so the set stays bounded by the TTL. */
  readonly #used = new Map<string, number>()
  /** Nonces whose code exchange is under way on this instance. */
  readonly #inFlight = new Set<string>()

  constructor(options: { key: Buffer; ttlMs?: number; now?: () => number }) {
    if (options.key.length < 32) throw new RangeError('authorization state key must have at least 32 bytes')
    this.#key = options.key
    this.#encryptionKey = Buffer.from(hkdfSync('sha256', options.key, Buffer.alloc(0), 'tep bank-sync authorization state encryption v1', 32))
    this.#ttlMs = options.ttlMs ?? DEFAULT_STATE_TTL_MS
    this.#now = options.now ?? Date.now
  }

  get ttlMs(): number {
    return this.#ttlMs
  }

  issue(claims: Omit<AuthorizationStateClaims, 'expiresAt' | 'nonce'>): {
    state: string
    claims: AuthorizationStateClaims
  } {
    const full: AuthorizationStateClaims = {
      ...claims,
      expiresAt: this.#now() + this.#ttlMs,
      nonce: randomBytes(16).toString('base64url'),
    }
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#encryptionKey, iv)
    // An array, not an object: the bank takes states of at most 500 characters, and a
    // customer id may have 128 (keys would cost ~70 of them after sealing and base64).
    const packed = [full.consentId, full.customerId, full.scope, full.binding, full.expiresAt, full.nonce]
    const sealed = Buffer.concat([iv, cipher.update(JSON.stringify(packed), 'utf8'), cipher.final(), cipher.getAuthTag()])
    const body = sealed.toString('base64url')
    return { state: `${body}.${this.#sign(body)}`, claims: full }
  }

  /** Checks signature and expiry without using the state up. */
  verify(state: string): AuthorizationStateClaims {
    const dot = state.indexOf('.')
    if (dot <= 0 || dot !== state.lastIndexOf('.')) {
      throw new ConsentStateError(
        'MALFORMED',
        'the authorization state is malformed; start the consent again',
      )
    }
    const body = state.slice(0, dot)
    const given = Buffer.from(state.slice(dot + 1), 'base64url')
    const expected = Buffer.from(this.#sign(body), 'base64url')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new ConsentStateError(
        'BAD_SIGNATURE',
        'the authorization state was not issued by this consent gateway (or was altered); start the consent again',
      )
    }
    let claims: AuthorizationStateClaims
    try {
      const sealed = Buffer.from(body, 'base64url')
      const decipher = createDecipheriv('aes-256-gcm', this.#encryptionKey, sealed.subarray(0, IV_BYTES))
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES))
      const json = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()])
      const [consentId, customerId, scope, binding, expiresAt, nonce] = JSON.parse(json.toString('utf8')) as unknown[]
      claims = { consentId, customerId, scope, binding, expiresAt, nonce } as AuthorizationStateClaims
    } catch {
      throw new ConsentStateError(
        'MALFORMED',
        'the authorization state is malformed; start the consent again',
      )
    }
    if (
      typeof claims.consentId !== 'string' ||
      typeof claims.customerId !== 'string' ||
      typeof claims.scope !== 'string' ||
      typeof claims.binding !== 'string' ||
      typeof claims.expiresAt !== 'number' ||
      typeof claims.nonce !== 'string'
    ) {
      throw new ConsentStateError(
        'MALFORMED',
        'the authorization state is malformed; start the consent again',
      )
    }
    if (this.#now() > claims.expiresAt) {
      throw new ConsentStateError(
        'EXPIRED',
        `the authorization was started more than ${Math.round(this.#ttlMs / 60_000)} minutes ago and has expired; start the consent again`,
      )
    }
    return claims
  }

  /** verify() and mark the state used; a second call with the same state throws REUSED. */
  consume(state: string): AuthorizationStateClaims {
    const claims = this.begin(state)
    this.complete(claims)
    return claims
  }

  /**
   * verify() and hold the state while its code is exchanged: a concurrent or later
   * callback with it throws REUSED until `release` (the exchange failed for a
   * reason a retry can fix) or for good after `complete`.
   */
  begin(state: string): AuthorizationStateClaims {
    const claims = this.verify(state)
    this.#prune()
    if (this.#used.has(claims.nonce) || this.#inFlight.has(claims.nonce)) {
      throw new ConsentStateError(
        'REUSED',
        'this authorization callback was already processed (reloaded or replayed); look the consent up or start a new one',
      )
    }
    this.#inFlight.add(claims.nonce)
    return claims
  }

  /** The state is used up: the consent was recorded, or the bank refused its code for good. */
  complete(claims: AuthorizationStateClaims): void {
    this.#inFlight.delete(claims.nonce)
    this.#used.set(claims.nonce, claims.expiresAt)
  }

  /** The exchange failed for a reason a retry of the same callback can fix (bank unreachable). */
  release(claims: AuthorizationStateClaims): void {
    this.#inFlight.delete(claims.nonce)
  }

  #sign(body: string): string {
    return createHmac('sha256', this.#key).update(body).digest('base64url')
  }

  #prune(): void {
    const now = this.#now()
    for (const [nonce, expiresAt] of this.#used) if (expiresAt < now) this.#used.delete(nonce)
  }
}
