/**
 * Seeded randomness. Every generated value is a pure function of the seed and a
 * key (account id, day, index), so a day's transactions can be produced on their
 * own, in any order, and are the same in every run with the same seed.
 */

export function mix32(x: number): number {
  let h = x >>> 0
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** FNV-1a over the string, then mixed. */
export function hashString(text: string, salt = 0): number {
  let h = (0x811c9dc5 ^ salt) >>> 0
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return mix32(h)
}

/** Hash of several parts; order matters. */
export function hashKey(...parts: Array<string | number>): number {
  return hashString(parts.join('\u0001'))
}

/** splitmix32: a small sequential PRNG for the values that belong to one entity. */
export class Rng {
  #state: number

  constructor(seed: number) {
    this.#state = seed >>> 0
  }

  static of(...parts: Array<string | number>): Rng {
    return new Rng(hashKey(...parts))
  }

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

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  chance(probability: number): boolean {
    return this.next() < probability
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('cannot pick from an empty list')
    return items[Math.floor(this.next() * items.length)] as T
  }

  digits(count: number): string {
    let out = ''
    for (let i = 0; i < count; i++) out += String(this.int(0, 9))
    return out
  }
}
