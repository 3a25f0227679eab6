import { Rng } from '../core/random.ts'
import { BankSimConfigError } from '../errors.ts'

/**
 * Failure injection, set through `PUT /__admin/faults`. Every rate is a
 * probability per matching request; `count` limits the fault to the next N
 * matching requests (then it clears itself), which is what deterministic tests want.
 */
export interface FaultConfig {
  /** Added latency in ms: fixed, or uniform between min and max. */
  latencyMs?: number | { min: number; max: number }
  /** Share of requests answered with `errorStatus` (default 503). */
  errorRate?: number
  errorStatus?: number
  /** Share of requests answered 429 with `Retry-After: retryAfterSeconds` (default 1). */
  throttleRate?: number
  retryAfterSeconds?: number
  /** Share of requests whose connection is reset without an answer. */
  resetRate?: number
  /** Only requests whose path starts with this prefix (default: every bank API and OAuth path). */
  pathPrefix?: string
  /** Apply to the next N matching requests only. */
  count?: number
}

export type FaultDecision = { kind: 'none' } | { kind: 'error'; status: number } | { kind: 'throttle'; retryAfterSeconds: number } | { kind: 'reset' }

function rate(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || value < 0 || value > 1) throw new BankSimConfigError(`${name} must be a number from 0 to 1, got ${JSON.stringify(value)}`)
  return value
}

export function validateFaults(input: unknown): FaultConfig {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new BankSimConfigError('faults must be a JSON object')
  const o = input as Record<string, unknown>
  const known = new Set(['latencyMs', 'errorRate', 'errorStatus', 'throttleRate', 'retryAfterSeconds', 'resetRate', 'pathPrefix', 'count'])
  for (const k of Object.keys(o)) if (!known.has(k)) throw new BankSimConfigError(`unknown fault setting ${k}; known: ${[...known].join(', ')}`)
  const out: FaultConfig = {}
  if (o.latencyMs !== undefined) {
    const l = o.latencyMs
    if (typeof l === 'number' && l >= 0) out.latencyMs = l
    else if (typeof l === 'object' && l !== null && typeof (l as { min?: unknown }).min === 'number' && typeof (l as { max?: unknown }).max === 'number' && (l as { min: number }).min <= (l as { max: number }).max)
      out.latencyMs = { min: (l as { min: number }).min, max: (l as { max: number }).max }
    else throw new BankSimConfigError('latencyMs must be a number of ms or { min, max }')
  }
  const errorRate = rate(o.errorRate, 'errorRate')
  const throttleRate = rate(o.throttleRate, 'throttleRate')
  const resetRate = rate(o.resetRate, 'resetRate')
  if (errorRate !== undefined) out.errorRate = errorRate
  if (throttleRate !== undefined) out.throttleRate = throttleRate
  if (resetRate !== undefined) out.resetRate = resetRate
  if (o.errorStatus !== undefined) {
    if (typeof o.errorStatus !== 'number' || !Number.isInteger(o.errorStatus) || o.errorStatus < 400 || o.errorStatus > 599) throw new BankSimConfigError('errorStatus must be an HTTP status from 400 to 599')
    out.errorStatus = o.errorStatus
  }
  if (o.retryAfterSeconds !== undefined) {
    if (typeof o.retryAfterSeconds !== 'number' || !Number.isInteger(o.retryAfterSeconds) || o.retryAfterSeconds < 0) throw new BankSimConfigError('retryAfterSeconds must be a non-negative integer')
    out.retryAfterSeconds = o.retryAfterSeconds
  }
  if (o.pathPrefix !== undefined) {
    if (typeof o.pathPrefix !== 'string' || !o.pathPrefix.startsWith('/')) throw new BankSimConfigError('pathPrefix must be a path starting with /')
    out.pathPrefix = o.pathPrefix
  }
  if (o.count !== undefined) {
    if (typeof o.count !== 'number' || !Number.isInteger(o.count) || o.count < 1) throw new BankSimConfigError('count must be a positive integer')
    out.count = o.count
  }
  return out
}

export class FaultInjector {
  #config: FaultConfig = {}
  readonly #rng: Rng
  readonly injected = { error: 0, throttle: 0, reset: 0, delayed: 0 }

  constructor(seed: string) {
    this.#rng = Rng.of(seed, 'faults')
  }

  get config(): FaultConfig {
    return { ...this.#config }
  }

  set(config: FaultConfig): void {
    this.#config = { ...config }
  }

  clear(): void {
    this.#config = {}
  }

  matches(path: string): boolean {
    const prefix = this.#config.pathPrefix
    return prefix === undefined || path.startsWith(prefix)
  }

  latencyMs(path: string): number {
    const l = this.#config.latencyMs
    if (l === undefined || !this.matches(path)) return 0
    this.injected.delayed++
    return typeof l === 'number' ? l : l.min + this.#rng.next() * (l.max - l.min)
  }

  decide(path: string): FaultDecision {
    const c = this.#config
    if (!this.matches(path)) return { kind: 'none' }
    const hasFault = (c.resetRate ?? 0) > 0 || (c.throttleRate ?? 0) > 0 || (c.errorRate ?? 0) > 0
    if (!hasFault) return { kind: 'none' }
    let decision: FaultDecision = { kind: 'none' }
    if (c.resetRate !== undefined && this.#rng.chance(c.resetRate)) decision = { kind: 'reset' }
    else if (c.throttleRate !== undefined && this.#rng.chance(c.throttleRate)) decision = { kind: 'throttle', retryAfterSeconds: c.retryAfterSeconds ?? 1 }
    else if (c.errorRate !== undefined && this.#rng.chance(c.errorRate)) decision = { kind: 'error', status: c.errorStatus ?? 503 }
    if (c.count !== undefined) {
      c.count--
      if (c.count <= 0) this.#config = {}
    }
    if (decision.kind !== 'none') this.injected[decision.kind]++
    return decision
  }
}
