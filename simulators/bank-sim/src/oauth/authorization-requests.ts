import { randomBytes } from 'node:crypto'
import type { SimClock } from '../core/sim-clock.ts'
import type { Scope } from './token-service.ts'

/** A consent flow in progress between the login page and the grant/deny answer. */
export interface AuthorizationRequest {
  id: string
  clientId: string
  /** Where the browser goes back to. */
  redirectUri: string
  /** The redirect_uri as sent (undefined when omitted), which the token request must repeat. */
  redirectUriSent: string | undefined
  scope: Scope
  state: string | undefined
  /** PKCE (RFC 7636): the S256 challenge sent with the request, which the token request must answer. */
  codeChallenge: string | undefined
  userId?: string
  expiresAt: number
}

export class AuthorizationRequests {
  readonly #clock: SimClock
  readonly #requests = new Map<string, AuthorizationRequest>()
  /** The login and consent pages must be finished within this time (ASSUMPTION: 10 minutes). */
  readonly ttlMs = 10 * 60_000

  constructor(clock: SimClock) {
    this.#clock = clock
  }

  open(input: Omit<AuthorizationRequest, 'id' | 'expiresAt'>): AuthorizationRequest {
    const now = this.#clock.now()
    for (const [id, r] of this.#requests) if (r.expiresAt < now) this.#requests.delete(id)
    const request: AuthorizationRequest = { ...input, id: randomBytes(16).toString('base64url'), expiresAt: now + this.ttlMs }
    this.#requests.set(request.id, request)
    return request
  }

  get(id: unknown): AuthorizationRequest | undefined {
    if (typeof id !== 'string') return undefined
    const r = this.#requests.get(id)
    return r && r.expiresAt >= this.#clock.now() ? r : undefined
  }

  close(id: string): void {
    this.#requests.delete(id)
  }

  clear(): void {
    this.#requests.clear()
  }
}
