/**
 * How much of its budget the backfill (or a replay) may use while live traffic
 * runs beside it: a share between 0 (stopped) and 1 (its whole --api-rps and
 * --api-concurrency), adjusted after each look at the live path, as data.
 *
 * The signal is the live ingest's lag, read from the brokers (its group's
 * committed offsets against the live topic's end), turned into time: lag
 * records over the live input rate seen between two looks, i.e. how long the
 * live ingest needs to catch up, which is the queueing part of its latency.
 * The share follows AIMD (as TCP does): it halves while the live path is behind
 * and grows by a fixed step while it keeps up, so a backfill gives way within a
 * look or two and takes its budget back slowly.
 */
export interface YieldPolicy {
  /** How often the live lag is read, ms. */
  intervalMs: number
  /** Live lag time (ms) up to which the live path counts as keeping up: the share grows. */
  targetLagMs: number
  /** Live lag time (ms) at or above which the backfill stops until the lag is back under target. */
  stopLagMs: number
  /** Live lag in records at or above which the backfill stops, whatever the rate (0 = no such bound). */
  stopLagRecords: number
  /** Factor applied to the share while the live path is behind (0 < f < 1). */
  decrease: number
  /** Added to the share after each look that finds the live path keeping up. */
  increase: number
  /** Smallest share while not stopped, so that the backfill keeps moving. */
  minShare: number
  /**
   * API answers to the backfill slower than this (moving average, ms) count as
   * "behind" too: the API is shared with the live ingest. 0 = not watched.
   */
  maxApiLatencyMs: number
}

export const DEFAULT_YIELD_POLICY: Readonly<YieldPolicy> = Object.freeze({
  intervalMs: 250,
  targetLagMs: 100,
  stopLagMs: 1_000,
  stopLagRecords: 5_000,
  decrease: 0.5,
  increase: 0.05,
  minShare: 0.02,
  maxApiLatencyMs: 2_000,
})

/** One look at the live path. */
export interface LiveObservation {
  /** Records of the live topic not yet committed by the live group (all partitions). */
  lagRecords: number
  /** Live records per second arriving since the previous look (0 when unknown). */
  liveRatePerSecond: number
  /** Moving average of the API's answers to the backfill, ms (0 when none yet). */
  apiLatencyMs: number
}

export type YieldState = 'full' | 'slowed' | 'stopped'

export interface YieldDecision {
  share: number
  state: YieldState
  /** Why the share went down (undefined when the live path keeps up). */
  reason: string | undefined
  /** The lag as time, ms (0 with no live traffic). */
  lagMs: number
}

/**
 * Lag records over the live rate, in ms. With no live records arriving the time is
 * unknown and counts as 0: a lag that does not move (a live group that is gone, an
 * ingest stopped on purpose) must not stop a backfill for ever; the record bound
 * (stopLagRecords) still applies, and a stopped ingest under traffic shows a rate.
 */
export function lagTimeMs(o: LiveObservation): number {
  if (o.lagRecords <= 0 || !(o.liveRatePerSecond > 0)) return 0
  return (o.lagRecords / o.liveRatePerSecond) * 1_000
}

/** The share after one look at the live path, from the share before it. */
export function nextShare(policy: YieldPolicy, share: number, o: LiveObservation): YieldDecision {
  const lagMs = lagTimeMs(o)
  if (policy.stopLagRecords > 0 && o.lagRecords >= policy.stopLagRecords)
    return { share: 0, state: 'stopped', reason: `live ingest lag ${o.lagRecords} records (stop at ${policy.stopLagRecords})`, lagMs }
  if (lagMs >= policy.stopLagMs)
    return { share: 0, state: 'stopped', reason: `live ingest ${Math.round(lagMs)} ms behind (stop at ${policy.stopLagMs} ms)`, lagMs }
  let reason: string | undefined
  if (lagMs > policy.targetLagMs) reason = `live ingest ${Math.round(lagMs)} ms behind (target ${policy.targetLagMs} ms)`
  else if (policy.maxApiLatencyMs > 0 && o.apiLatencyMs > policy.maxApiLatencyMs)
    reason = `enrichment API answers in ${Math.round(o.apiLatencyMs)} ms on average (threshold ${policy.maxApiLatencyMs} ms)`
  if (reason !== undefined) {
    const next = Math.max(policy.minShare, share * policy.decrease)
    return { share: next, state: 'slowed', reason, lagMs }
  }
  // From a stop, the backfill restarts at its smallest share, not where it was.
  const next = share <= 0 ? policy.minShare : Math.min(1, share + policy.increase)
  return { share: next, state: next >= 1 ? 'full' : 'slowed', reason: undefined, lagMs }
}

/** Merges `overrides` over the defaults and checks every field. */
export function resolveYieldPolicy(overrides: Partial<YieldPolicy> = {}): YieldPolicy {
  const p: YieldPolicy = { ...DEFAULT_YIELD_POLICY, ...overrides }
  const bad = (name: keyof YieldPolicy, rule: string): never => {
    throw new RangeError(`yield policy ${name} must be ${rule}, got ${String(p[name])}`)
  }
  if (!(p.intervalMs >= 10)) bad('intervalMs', 'at least 10 ms')
  if (!(p.targetLagMs > 0)) bad('targetLagMs', 'positive')
  if (!(p.stopLagMs > p.targetLagMs)) bad('stopLagMs', `greater than targetLagMs (${p.targetLagMs})`)
  if (!(p.stopLagRecords >= 0)) bad('stopLagRecords', '0 or more')
  if (!(p.decrease > 0 && p.decrease < 1)) bad('decrease', 'between 0 and 1')
  if (!(p.increase > 0 && p.increase <= 1)) bad('increase', 'in (0, 1]')
  if (!(p.minShare > 0 && p.minShare <= 1)) bad('minShare', 'in (0, 1]')
  if (!(p.maxApiLatencyMs >= 0)) bad('maxApiLatencyMs', '0 or more')
  return p
}
