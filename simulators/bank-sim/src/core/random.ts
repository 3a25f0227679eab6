import { Rng as SimRng, hashString } from '@tep/sim-data'

/**
 * Seeded randomness. Every generated value is a pure function of the seed and a
 * key (account id, day, index), so a day's transactions can be produced on their
 * own, in any order, and are the same in every run with the same seed.
 *
 * The generator and the string hash are @tep/sim-data's (the enrichment
 * simulator's data set uses the same ones); this adds keys made of several parts
 * and digit strings.
 */
export { hashString }

/** Hash of several parts; order matters. */
export function hashKey(...parts: Array<string | number>): number {
  return hashString(parts.join('\u0001'))
}

export class Rng extends SimRng {
  static of(...parts: Array<string | number>): Rng {
    return new Rng(hashKey(...parts))
  }

  /** `count` random decimal digits. */
  digits(count: number): string {
    let out = ''
    for (let i = 0; i < count; i++) out += String(this.int(0, 9))
    return out
  }
}
