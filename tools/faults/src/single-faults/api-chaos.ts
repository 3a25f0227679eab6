import type { InjectContext } from '../inject-context.ts'
import type { SingleFault, SingleFaultOutcome } from '../single-fault.ts'

/**
 * API chaos through the simulators' `/__admin/faults`: a set of faults put for a
 * while, then cleared. Healed = cleared (the API answers normally again).
 */

export interface ApiBurst {
  /** Short name, the fault's target in the soak: `enrichment-api:<key>`. */
  key: string
  /** In words, for the log: "5xx burst (503)". */
  what: string
  faults: Record<string, unknown>
  /** How long the faults stay (0: a one-off such as token revocation). */
  ms: number
}

export async function putFaults(url: string, faults: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${url}/__admin/faults`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(faults) })
  if (!res.ok) throw new Error(`PUT ${url}/__admin/faults ${JSON.stringify(faults)} answered ${res.status}: ${await res.text()}`)
}

export async function clearFaults(url: string): Promise<void> {
  await fetch(`${url}/__admin/faults`, { method: 'DELETE' }).then((r) => r.body?.cancel())
}

/** Puts `burst` on the simulator at `url`, keeps it `ms` (default the burst's own), clears it. */
export async function apiBurst(ctx: InjectContext, api: 'enrichment' | 'bank', burst: ApiBurst, ms = burst.ms): Promise<SingleFaultOutcome> {
  const url = api === 'enrichment' ? ctx.system.enrichmentUrl : ctx.system.bankUrl
  const startedAt = Date.now()
  await putFaults(url, burst.faults)
  ctx.say(`  ${api === 'enrichment' ? 'enrichment' : 'bank'} API: ${burst.what}`)
  try {
    await new Promise((r) => setTimeout(r, ms))
  } finally {
    await clearFaults(url)
  }
  return { startedAt, healedAt: Date.now(), description: `${api} API: ${burst.what}${ms > 0 ? ` for ${ms / 1000} s` : ''}` }
}

/**
 * The enrichment-api-chaos row's bursts, in its order (an array: keys such as
 * '503' would be put first by an object's integer-key ordering).
 */
export const ENRICHMENT_BURSTS: ApiBurst[] = [
  { key: '503', what: '5xx burst (503)', faults: { errorRate: 1, errorStatus: 503 }, ms: 6_000 },
  { key: '500-half', what: '5xx burst (500, half the calls)', faults: { errorRate: 0.5, errorStatus: 500 }, ms: 6_000 },
  { key: '429', what: '429 with Retry-After 2', faults: { throttleRate: 1, retryAfterSeconds: 2 }, ms: 6_000 },
  { key: 'latency', what: 'latency 12 s (client timeout 10 s)', faults: { latencyMs: 12_000 }, ms: 15_000 },
  { key: 'resets', what: 'connection resets', faults: { resetRate: 0.5 }, ms: 6_000 },
  { key: 'token-revocation', what: 'token revocation', faults: { revokeTokens: true }, ms: 0 },
]

/** The bank-api-chaos row's bursts (each held 8 s in the full row, 5 s in the short one). */
export const BANK_BURSTS = {
  500: { key: '500', what: '5xx (500)', faults: { errorRate: 1, errorStatus: 500 }, ms: 8_000 },
  '503-half': { key: '503-half', what: '5xx (503, half the calls)', faults: { errorRate: 0.5, errorStatus: 503 }, ms: 8_000 },
  429: { key: '429', what: '429 with Retry-After 2', faults: { throttleRate: 1, retryAfterSeconds: 2 }, ms: 8_000 },
} satisfies Record<string, ApiBurst>

/**
 * The soak's API faults: every enrichment burst, and the bank's 5xx and 429
 * bursts. The bank row's consent revoked by the user and its 91-day clock jump
 * are not faults of the system but events of a customer's life: they end
 * consents on purpose, so the soak leaves them to the row.
 */
export const API_CHAOS_FAULTS: SingleFault[] = [
  ...ENRICHMENT_BURSTS.map((burst): SingleFault => ({ name: `enrichment-api:${burst.key}`, topology: 'any', inject: (ctx) => apiBurst(ctx, 'enrichment', burst) })),
  ...[BANK_BURSTS[500], BANK_BURSTS['503-half'], BANK_BURSTS[429]].map((burst): SingleFault => ({ name: `bank-api:${burst.key}`, topology: 'any', inject: (ctx) => apiBurst(ctx, 'bank', burst) })),
]
