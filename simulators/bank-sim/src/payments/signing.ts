import { randomBytes } from 'node:crypto'
import type { SimClock } from '../core/sim-clock.ts'

export type SignTarget = { type: 'payment'; id: string } | { type: 'standingOrder'; id: string }

/** One authorization page handed out by a sign operation. */
export interface SignSession {
  id: string
  target: SignTarget
  signId: string
  userId: string
  returnUrl: string
  expiresAt: number
}

/**
 * The pages behind `href.url` of the sign operations. A new sign call for the same
 * signId replaces the earlier page, so only the newest link works.
 */
export class SigningSessions {
  readonly #clock: SimClock
  readonly #sessions = new Map<string, SignSession>()
  readonly ttlMs: number

  constructor(clock: SimClock, ttlMs = 15 * 60_000) {
    this.#clock = clock
    this.ttlMs = ttlMs
  }

  open(target: SignTarget, signId: string, userId: string, returnUrl: string): SignSession {
    for (const [id, s] of this.#sessions) if (s.signId === signId) this.#sessions.delete(id)
    const session: SignSession = { id: randomBytes(16).toString('base64url'), target, signId, userId, returnUrl, expiresAt: this.#clock.now() + this.ttlMs }
    this.#sessions.set(session.id, session)
    return session
  }

  /** The live session, or undefined when unknown, replaced or expired. */
  get(id: string): SignSession | undefined {
    const s = this.#sessions.get(id)
    if (!s || this.#clock.now() > s.expiresAt) return undefined
    return s
  }

  close(id: string): void {
    this.#sessions.delete(id)
  }

  clear(): void {
    this.#sessions.clear()
  }
}

/** Appends `name=value` to a URL's query, keeping what is there. */
export function appendQuery(url: string, params: Record<string, string>): string {
  const u = new URL(url)
  for (const [k, v] of Object.entries(params)) u.searchParams.append(k, v)
  return u.toString()
}
