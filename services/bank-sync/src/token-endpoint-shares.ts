/**
 * How the bank's token endpoint budget (DEFAULT_AUTHORIZATION_LIMITS: 900 calls
 * per 6 minutes for this client id) is split: callbacks of new consents get a
 * third on their own limiter, refreshes of existing consents the rest on
 * theirs, so neither can starve the other.
 */
export const GATEWAY_TOKEN_SHARE = 300
export const DEFAULT_CALLBACK_BUDGET = { maxConcurrent: 2, maxQueued: 16 }

/**
 * One instance's shares of the bank's token endpoint (`perClient` calls per window
 * for the whole client id): the gateway's third and the sync's rest, each divided by
 * the number of instances so that all of them together stay within the bank's limit.
 */
export function tokenEndpointShares(perClient: number, replicas: number): { gateway: number; sync: number } {
  if (!Number.isInteger(replicas) || replicas < 1) throw new RangeError(`replicas must be a positive integer, got ${replicas}`)
  const gateway = Math.max(1, Math.floor(GATEWAY_TOKEN_SHARE / replicas))
  const sync = Math.max(1, Math.floor((perClient - GATEWAY_TOKEN_SHARE) / replicas))
  return { gateway, sync }
}
