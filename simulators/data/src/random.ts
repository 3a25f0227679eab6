import { SimDataError } from './errors.ts'

/**
 * Seeded, allocation-free randomness. Every generated value is a pure function of
 * (seed, namespace, index), so any shop or merchant can be produced on its own
 * without generating those before it: that is what lets the data set scale to
 * millions of shops while holding almost nothing in memory.
 */

/** The murmur3 finaliser: a cheap 32-bit avalanche mix. */
export function mix32(x: number): number {
  let h = x >>> 0
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** Hashes a list of unsigned 32-bit integers into one. Order matters. */
export function hashInts(...values: number[]): number {
  let h = 0x9e3779b9
  for (const v of values) h = mix32((h ^ mix32(v >>> 0)) + 0x7f4a7c15)
  return h
}

/** FNV-1a over the UTF-16 code units of a string, then mixed. */
export function hashString(text: string, salt = 0): number {
  let h = (0x811c9dc5 ^ salt) >>> 0
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return mix32(h)
}

/** Turns any seed (number or text) into a 32-bit integer. */
export function seedToInt(seed: number | string): number {
  if (typeof seed === 'number') {
    if (!Number.isFinite(seed)) throw new SimDataError(`seed must be a finite number, got ${seed}`, { code: 'SIM_DATA_INVALID_ARGUMENT', details: { seed } })
    return hashInts(Math.floor(seed) >>> 0, Math.floor(seed / 2 ** 32) >>> 0)
  }
  return hashString(seed, 0x5eed)
}

/**
 * A small sequential PRNG (splitmix32) for drawing several values that belong to
 * one entity. Construct it from a hash of (seed, namespace, index).
 */
export class Rng {
  #state: number

  constructor(state: number) {
    this.#state = state >>> 0
  }

  /** Uniform unsigned 32-bit integer. */
  nextU32(): number {
    this.#state = (this.#state + 0x9e3779b9) >>> 0
    let z = this.#state
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
    return (z ^ (z >>> 16)) >>> 0
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296
  }

  /** Uniform integer in [min, max] (inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  chance(probability: number): boolean {
    return this.next() < probability
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new SimDataError('cannot pick from an empty list', { code: 'SIM_DATA_INVALID_ARGUMENT' })
    return items[Math.floor(this.next() * items.length)] as T
  }

  /** Picks by weight; `weights[i]` belongs to `items[i]`. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    let total = 0
    for (const w of weights) total += w
    let r = this.next() * total
    for (let i = 0; i < items.length; i++) {
      r -= weights[i] ?? 0
      if (r < 0) return items[i] as T
    }
    return items[items.length - 1] as T
  }

  /** Approximately normal (Irwin-Hall of 4), mean 0, standard deviation 1. */
  normal(): number {
    return (this.next() + this.next() + this.next() + this.next() - 2) * Math.sqrt(3)
  }

  /** `count` distinct items in random order (count is capped at the list size). */
  sample<T>(items: readonly T[], count: number): T[] {
    const pool = items.slice()
    const out: T[] = []
    while (out.length < count && pool.length > 0) {
      const i = Math.floor(this.next() * pool.length)
      out.push(pool[i] as T)
      pool[i] = pool[pool.length - 1] as T
      pool.pop()
    }
    return out
  }
}

export function rngFor(seed: number, namespace: number, index: number): Rng {
  return new Rng(hashInts(seed, namespace, index))
}
