import { hashString } from './random.ts'
import { SimDataError } from './errors.ts'

/**
 * A compact string-key → integer index for millions of entries: an open-addressing
 * table holding the value and a 32-bit fingerprint of its key, never the key
 * itself. A fingerprint hit is confirmed by asking the owner for the keys of the
 * candidate (`keysOf`), which regenerates them from the seed. 16 bytes per entry
 * instead of a Map's ~100.
 *
 * When two values claim the same key, the first one inserted keeps it (real data
 * has such clashes too: two businesses printing the same name in one city).
 */
export class KeyIndex {
  readonly #values: Int32Array
  readonly #fingerprints: Int32Array
  readonly #mask: number
  readonly #keysOf: (value: number) => readonly string[]
  #size = 0

  constructor(expectedEntries: number, keysOf: (value: number) => readonly string[]) {
    let capacity = 16
    while (capacity < expectedEntries * 2) capacity *= 2
    this.#values = new Int32Array(capacity).fill(-1)
    this.#fingerprints = new Int32Array(capacity)
    this.#mask = capacity - 1
    this.#keysOf = keysOf
  }

  get size(): number {
    return this.#size
  }

  /** Adds `key → value` unless the key is already taken. Returns whether it was added. */
  add(key: string, value: number): boolean {
    if ((this.#size + 1) * 2 > this.#values.length) throw new SimDataError('KeyIndex is full: construct it with the expected number of entries', { code: 'SIM_DATA_INVALID_ARGUMENT', details: { capacity: this.#values.length / 2 } })
    const hash = hashString(key) | 0
    for (let slot = hash & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const existing = this.#values[slot] as number
      if (existing === -1) {
        this.#values[slot] = value
        this.#fingerprints[slot] = hash
        this.#size++
        return true
      }
      if (this.#fingerprints[slot] === hash && this.#keysOf(existing).includes(key)) return false
    }
  }

  get(key: string): number | undefined {
    const hash = hashString(key) | 0
    for (let slot = hash & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const existing = this.#values[slot] as number
      if (existing === -1) return undefined
      if (this.#fingerprints[slot] === hash && this.#keysOf(existing).includes(key)) return existing
    }
  }
}
