import { Rng, hashInts } from '@tep/sim-data'
import { EnrichmentSimConfigError } from '../errors.ts'

/** Added latency: a fixed delay or a distribution, in milliseconds. */
export type LatencySpec =
  | { distribution: 'fixed'; ms: number }
  | { distribution: 'uniform'; minMs: number; maxMs: number }
  | { distribution: 'normal'; meanMs: number; stdDevMs: number }
  | { distribution: 'lognormal'; medianMs: number; sigma: number }

/**
 * Failure injection, set with `PUT /__admin/faults` (same shape as the bank
 * simulator's, plus latency distributions and token revocation). Rates are
 * probabilities per matching request, drawn from a seeded PRNG; `count` limits the
 * fault to the next N matching requests, which is what deterministic tests want.
 */
export interface FaultConfig {
  /** Shorthand: fixed ms, or uniform { min, max }. */
  latencyMs?: number | { min: number; max: number }
  latency?: LatencySpec
  /** Share of requests answered with `errorStatus` (default 503). */
  errorRate?: number
  errorStatus?: number
  /** Share of requests answered 429 with `Retry-After: retryAfterSeconds` (default 1). */
  throttleRate?: number
  retryAfterSeconds?: number
  /** Share of requests whose connection is destroyed without an answer. */
  resetRate?: number
  /** Only requests whose path starts with this (default: every API and token path, never /__admin). */
  pathPrefix?: string
  /** Apply the error, throttle and reset faults to the next N matching requests only. */
  count?: number
}

export type FaultDecision = { kind: 'none' } | { kind: 'error'; status: number } | { kind: 'throttle'; retryAfterSeconds: number } | { kind: 'reset' }

const KNOWN = ['latencyMs', 'latency', 'errorRate', 'errorStatus', 'throttleRate', 'retryAfterSeconds', 'resetRate', 'pathPrefix', 'count', 'revokeTokens']

function fail(message: string): never {
  throw new EnrichmentSimConfigError(message)
}

function rate(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) fail(`${name} must be a number from 0 to 1, got ${JSON.stringify(value)}`)
  return value
}

function nonNegative(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) fail(`${name} must be a non-negative number, got ${JSON.stringify(value)}`)
  return value
}

function latencySpec(value: unknown): LatencySpec {
  if (typeof value !== 'object' || value === null) fail('latency must be an object with "distribution"')
  const o = value as Record<string, unknown>
  switch (o.distribution) {
    case 'fixed':
      return { distribution: 'fixed', ms: nonNegative(o.ms, 'latency.ms') }
    case 'uniform': {
      const minMs = nonNegative(o.minMs, 'latency.minMs')
      const maxMs = nonNegative(o.maxMs, 'latency.maxMs')
      if (minMs > maxMs) fail('latency.minMs must not exceed latency.maxMs')
      return { distribution: 'uniform', minMs, maxMs }
    }
    case 'normal':
      return { distribution: 'normal', meanMs: nonNegative(o.meanMs, 'latency.meanMs'), stdDevMs: nonNegative(o.stdDevMs, 'latency.stdDevMs') }
    case 'lognormal':
      return { distribution: 'lognormal', medianMs: nonNegative(o.medianMs, 'latency.medianMs'), sigma: nonNegative(o.sigma, 'latency.sigma') }
    default:
      return fail(`latency.distribution must be fixed, uniform, normal or lognormal, got ${JSON.stringify(o.distribution)}`)
  }
}

/** Validates a fault document; `revokeTokens` is an action, returned separately. */
export function parseFaults(input: unknown): { faults: FaultConfig; revokeTokens: boolean } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) fail('faults must be a JSON object')
  const o = input as Record<string, unknown>
  for (const key of Object.keys(o)) if (!KNOWN.includes(key)) fail(`unknown fault setting ${JSON.stringify(key)}; known: ${KNOWN.join(', ')}`)
  const faults: FaultConfig = {}
  if (o.latencyMs !== undefined) {
    const l = o.latencyMs
    if (typeof l === 'number') faults.latencyMs = nonNegative(l, 'latencyMs')
    else if (typeof l === 'object' && l !== null && 'min' in l && 'max' in l) {
      const min = nonNegative((l as { min: unknown }).min, 'latencyMs.min')
      const max = nonNegative((l as { max: unknown }).max, 'latencyMs.max')
      if (min > max) fail('latencyMs.min must not exceed latencyMs.max')
      faults.latencyMs = { min, max }
    } else fail('latencyMs must be a number of ms or { "min": ms, "max": ms }')
  }
  if (o.latency !== undefined) faults.latency = latencySpec(o.latency)
  const errorRate = rate(o.errorRate, 'errorRate')
  const throttleRate = rate(o.throttleRate, 'throttleRate')
  const resetRate = rate(o.resetRate, 'resetRate')
  if (errorRate !== undefined) faults.errorRate = errorRate
  if (throttleRate !== undefined) faults.throttleRate = throttleRate
  if (resetRate !== undefined) faults.resetRate = resetRate
  if (o.errorStatus !== undefined) {
    if (typeof o.errorStatus !== 'number' || !Number.isInteger(o.errorStatus) || o.errorStatus < 400 || o.errorStatus > 599) fail('errorStatus must be an HTTP status from 400 to 599')
    faults.errorStatus = o.errorStatus
  }
  if (o.retryAfterSeconds !== undefined) {
    if (typeof o.retryAfterSeconds !== 'number' || !Number.isInteger(o.retryAfterSeconds) || o.retryAfterSeconds < 0) fail('retryAfterSeconds must be a non-negative integer')
    faults.retryAfterSeconds = o.retryAfterSeconds
  }
  if (o.pathPrefix !== undefined) {
    if (typeof o.pathPrefix !== 'string' || !o.pathPrefix.startsWith('/')) fail('pathPrefix must be a path starting with /')
    faults.pathPrefix = o.pathPrefix
  }
  if (o.count !== undefined) {
    if (typeof o.count !== 'number' || !Number.isInteger(o.count) || o.count < 1) fail('count must be a positive integer')
    faults.count = o.count
  }
  if (o.revokeTokens !== undefined && typeof o.revokeTokens !== 'boolean') fail('revokeTokens must be true or false')
  return { faults, revokeTokens: o.revokeTokens === true }
}

export class FaultInjector {
  #config: FaultConfig = {}
  #remaining: number | undefined
  readonly #rng: Rng
  readonly injected = { error: 0, throttle: 0, reset: 0, delayed: 0 }

  constructor(seed: number) {
    this.#rng = new Rng(hashInts(seed, 0xfa017))
  }

  get config(): FaultConfig & { remaining?: number } {
    return { ...this.#config, ...(this.#remaining === undefined ? {} : { remaining: this.#remaining }) }
  }

  set(config: FaultConfig): void {
    this.#config = config
    this.#remaining = config.count
  }

  clear(): void {
    this.set({})
    this.injected.error = this.injected.throttle = this.injected.reset = this.injected.delayed = 0
  }

  applies(path: string): boolean {
    return path.startsWith(this.#config.pathPrefix ?? '/') && !path.startsWith('/__admin')
  }

  /** Delay to add before answering, in ms (0 when none). */
  delayMs(): number {
    const c = this.#config
    let ms = 0
    if (typeof c.latencyMs === 'number') ms += c.latencyMs
    else if (c.latencyMs !== undefined) ms += c.latencyMs.min + this.#rng.next() * (c.latencyMs.max - c.latencyMs.min)
    if (c.latency !== undefined) ms += this.#sample(c.latency)
    if (ms > 0) this.injected.delayed++
    return ms
  }

  #sample(spec: LatencySpec): number {
    switch (spec.distribution) {
      case 'fixed':
        return spec.ms
      case 'uniform':
        return spec.minMs + this.#rng.next() * (spec.maxMs - spec.minMs)
      case 'normal':
        return Math.max(0, spec.meanMs + this.#rng.normal() * spec.stdDevMs)
      case 'lognormal':
        return spec.medianMs * Math.exp(this.#rng.normal() * spec.sigma)
    }
  }

  /** Whether this request fails, and how. Counts down `count`. */
  decide(): FaultDecision {
    const c = this.#config
    if (this.#remaining === 0) return { kind: 'none' }
    let decision: FaultDecision = { kind: 'none' }
    if (c.resetRate !== undefined && this.#rng.next() < c.resetRate) decision = { kind: 'reset' }
    else if (c.errorRate !== undefined && this.#rng.next() < c.errorRate) decision = { kind: 'error', status: c.errorStatus ?? 503 }
    else if (c.throttleRate !== undefined && this.#rng.next() < c.throttleRate) decision = { kind: 'throttle', retryAfterSeconds: c.retryAfterSeconds ?? 1 }
    if (decision.kind !== 'none') {
      this.injected[decision.kind]++
      if (this.#remaining !== undefined) this.#remaining--
    }
    return decision
  }
}
