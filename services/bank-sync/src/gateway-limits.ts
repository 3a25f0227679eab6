/**
 * What one client may cost the gateway. Fastify's defaults have no request
 * timeout and no connection cap, so a slow client (headers or body one byte at a
 * time) could hold sockets forever.
 */
export interface GatewayLimits {
  /** Whole request (headers and body) received within this, else 408 and closed. */
  requestTimeoutMs: number
  /** Headers received within this (at most requestTimeoutMs). */
  headersTimeoutMs: number
  /**
   * A socket with no traffic at all is closed after this, even while its answer is
   * pending: longer than a callback can wait for its code exchange (queue and
   * running slots, each exchange bounded by the bank client's timeout).
   */
  idleTimeoutMs: number
  /** Open connections at once; beyond, new ones are dropped. */
  maxConnections: number
  /** Largest body (POST /consents takes a tiny JSON). */
  bodyLimitBytes: number
  /** Consent starts, and callbacks, per customer and window. */
  perCustomer: { max: number; windowMs: number }
}

export const DEFAULT_GATEWAY_LIMITS: GatewayLimits = {
  requestTimeoutMs: 10_000,
  headersTimeoutMs: 5_000,
  idleTimeoutMs: 120_000,
  maxConnections: 256,
  bodyLimitBytes: 4096,
  perCustomer: { max: 10, windowMs: 10 * 60_000 },
}
