import { KafkaConfigError } from './errors.ts'

/**
 * How the pipeline backs off from a systemic failure (registry or API down, 5xx
 * storm, throttling): exponential with full jitter between a floor and a cap.
 * Attempts are unbounded on purpose: a systemic failure must not turn records into
 * DLQ entries, so the pipeline waits (paused, visible in readiness) until it heals.
 */
export interface RetryPolicy {
  /** Delay before the first retry, ms. */
  initialDelayMs: number
  /** Upper bound of any delay, ms. */
  maxDelayMs: number
  /** Growth per attempt. */
  multiplier: number
  /** 0 = no jitter, 1 = full jitter (delay uniformly in [base*(1-jitter), base]). */
  jitter: number
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  initialDelayMs: 200,
  maxDelayMs: 30_000,
  multiplier: 2,
  jitter: 0.5,
})

/** Merges overrides into the defaults and validates the result. */
export function resolveRetryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...overrides }
  const problems: string[] = []
  if (!(policy.initialDelayMs >= 0))
    problems.push(`initialDelayMs must be >= 0, got ${policy.initialDelayMs}`)
  if (!(policy.maxDelayMs >= policy.initialDelayMs))
    problems.push(`maxDelayMs must be >= initialDelayMs, got ${policy.maxDelayMs}`)
  if (!(policy.multiplier >= 1)) problems.push(`multiplier must be >= 1, got ${policy.multiplier}`)
  if (!(policy.jitter >= 0 && policy.jitter <= 1))
    problems.push(`jitter must be between 0 and 1, got ${policy.jitter}`)
  if (problems.length > 0)
    throw new KafkaConfigError(`invalid retry policy: ${problems.join('; ')}`, { policy })
  return policy
}

/**
 * Delay before retry number `attempt` (1 = first retry). `retryAfterMs`, when a
 * server asked for it (Retry-After), is a floor; the cap still applies.
 */
export function backoffDelay(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
  retryAfterMs?: number,
): number {
  const exponent = Math.max(0, attempt - 1)
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.multiplier ** exponent)
  const jittered = base * (1 - policy.jitter * random())
  const floor = retryAfterMs === undefined ? 0 : Math.min(retryAfterMs, policy.maxDelayMs)
  return Math.round(Math.max(jittered, floor))
}
