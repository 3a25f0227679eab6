import { hashInts, mix32 } from './random.ts'
import { SimDataError } from './errors.ts'

/**
 * A keyed bijection on [0, domain) (a small Feistel network with cycle walking).
 * Identifiers such as terminal ids and uid prefixes are `permute(index)`, and
 * `invert` turns an identifier back into the index: lookups need no index tables,
 * and distinct indexes can never produce the same identifier.
 */
export class Permutation {
  readonly domain: number
  readonly #halfBits: number
  readonly #mask: number
  readonly #keys: number[]

  constructor(domain: number, key: number) {
    if (!Number.isInteger(domain) || domain < 2 || domain > 2 ** 32) {
      throw new SimDataError(`permutation domain must be an integer in [2, 2^32], got ${domain}`, { code: 'SIM_DATA_INVALID_ARGUMENT', details: { domain } })
    }
    this.domain = domain
    const bits = Math.max(2, Math.ceil(Math.log2(domain)))
    this.#halfBits = Math.ceil(bits / 2)
    this.#mask = 2 ** this.#halfBits - 1
    this.#keys = [1, 2, 3, 4].map((round) => hashInts(key, round, domain >>> 0))
  }

  permute(value: number): number {
    this.#check(value)
    let x = value
    do x = this.#encrypt(x)
    while (x >= this.domain)
    return x
  }

  invert(value: number): number {
    this.#check(value)
    let x = value
    do x = this.#decrypt(x)
    while (x >= this.domain)
    return x
  }

  #check(value: number): void {
    if (!Number.isInteger(value) || value < 0 || value >= this.domain) {
      throw new SimDataError(`value ${value} is outside the permutation domain [0, ${this.domain})`, { code: 'SIM_DATA_INVALID_ARGUMENT', details: { value, domain: this.domain } })
    }
  }

  // Halves are at most 16 bits, so every intermediate stays an exact double.
  #encrypt(x: number): number {
    const m = this.#mask
    const shift = 2 ** this.#halfBits
    let left = Math.floor(x / shift) & m
    let right = x & m
    for (const k of this.#keys) {
      const next = (left ^ mix32(right ^ k)) & m
      left = right
      right = next
    }
    return left * shift + right
  }

  #decrypt(x: number): number {
    const m = this.#mask
    const shift = 2 ** this.#halfBits
    let left = Math.floor(x / shift) & m
    let right = x & m
    for (let i = this.#keys.length - 1; i >= 0; i--) {
      const prev = (right ^ mix32(left ^ (this.#keys[i] as number))) & m
      right = left
      left = prev
    }
    return left * shift + right
  }
}
