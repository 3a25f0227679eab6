import { compactIban, czechAccountNumber, makeIban } from './bank-numbers.ts'
import { ACQUIRERS, banksOf } from './catalog/banks.ts'
import type { AcquirerDef } from './catalog/banks.ts'
import { CATEGORIES, GENERIC_TAGS, categoryLogo } from './catalog/categories.ts'
import type { CategoryDef } from './catalog/categories.ts'
import { BRAND_SYLLABLES, LOCAL_WORDS } from './catalog/names.ts'
import { COUNTRIES } from './catalog/places.ts'
import type { CityDef, CountryDef } from './catalog/places.ts'
import { SimDataError } from './errors.ts'
import { KeyIndex } from './key-index.ts'
import { Permutation } from './permutation.ts'
import { Rng, hashInts, rngFor, seedToInt } from './random.ts'
import { base62Char, fromBase62, normaliseText, padDigits, printed, slug, toBase62 } from './text.ts'
import type { BankAccount, SimMerchant, SimShop, CoordinatesType } from './types.ts'

export interface DatasetOptions {
  /** Any number or text; the same seed always yields the same data. Default 1. */
  seed?: number | string
  /** Number of shops. Default 50,000. */
  shops?: number
  /** Number of merchants (at most `shops`). Default 5,000, or shops / 10 when that is less. */
  merchants?: number
}

export const DEFAULT_DATASET_OPTIONS = { seed: 1, shops: 50_000, merchants: 5_000 } as const

/** Largest supported sizes: terminal ids carry shop·8 + terminal in 30 bits; account numbers carry merchant·4 + n in 8 digits. */
export const MAX_SHOPS = 2 ** 27
export const MAX_MERCHANTS = 25_000_000

/** No chain grows beyond this many shops, whatever the size of the data set. */
const MAX_CHAIN_SIZE = 5_000
const SINGLE_SHOP_SHARE = 0.45
const MAX_TERMINALS = 8
const MERCHANT_CACHE_SIZE = 4096

// Namespaces keep the random streams of different entity kinds independent.
const NS = { merchant: 1, shop: 2, shopUid: 3, merchantUid: 4, terminal: 5, merchantId: 6, account: 7, shopUidPerm: 8, merchantUidPerm: 9, terminalCount: 10 } as const

const LOGO_BASE = 'https://logos.enrichment-sim.example/'

/** How a card input or account key resolved to data, before any simulator overlay. */
export type CardMatchRule = 'merchantId+terminalId' | 'terminalId' | 'merchantId' | 'name+city'

/**
 * The whole generated world: merchants and their shops, derived on demand from the
 * seed. Only the merchant → shop ranges and two compact key indexes (acceptor
 * name + city, bank accounts) are held in memory; every entity is regenerated when
 * asked for, so a data set of millions of shops costs tens of megabytes.
 */
export class SimDataset {
  readonly seed: number
  readonly shopCount: number
  readonly merchantCount: number
  readonly #firstShop: Int32Array
  readonly #shopUidPerm: Permutation
  readonly #merchantUidPerm: Permutation
  readonly #terminalPerm: Permutation
  readonly #merchantIdPerm: Permutation
  readonly #accountPerm: Permutation
  readonly #nameIndex: KeyIndex
  readonly #accountIndex: KeyIndex
  readonly #merchantCache = new Map<number, GeneratedMerchant>()

  constructor(options: DatasetOptions = {}) {
    const shops = options.shops ?? DEFAULT_DATASET_OPTIONS.shops
    const merchants = options.merchants ?? Math.min(DEFAULT_DATASET_OPTIONS.merchants, Math.max(1, Math.round(shops / 10)))
    if (!Number.isInteger(shops) || shops < 1 || shops > MAX_SHOPS) {
      throw new SimDataError(`shops must be an integer from 1 to ${MAX_SHOPS}, got ${shops}`, { code: 'SIM_DATA_INVALID_SIZE', details: { shops } })
    }
    if (!Number.isInteger(merchants) || merchants < 1 || merchants > shops || merchants > MAX_MERCHANTS) {
      throw new SimDataError(`merchants must be an integer from 1 to min(shops, ${MAX_MERCHANTS}), got ${merchants} for ${shops} shops`, {
        code: 'SIM_DATA_INVALID_SIZE',
        details: { shops, merchants },
      })
    }
    this.seed = seedToInt(options.seed ?? DEFAULT_DATASET_OPTIONS.seed)
    this.shopCount = shops
    this.merchantCount = merchants
    this.#firstShop = chainSizes(shops, merchants)
    this.#shopUidPerm = new Permutation(2 ** 32, hashInts(this.seed, NS.shopUidPerm))
    this.#merchantUidPerm = new Permutation(2 ** 32, hashInts(this.seed, NS.merchantUidPerm))
    this.#terminalPerm = new Permutation(2 ** 30, hashInts(this.seed, NS.terminal))
    this.#merchantIdPerm = new Permutation(2 ** 32, hashInts(this.seed, NS.merchantId))
    this.#accountPerm = new Permutation(100_000_000, hashInts(this.seed, NS.account))
    this.#nameIndex = new KeyIndex(shops, (i) => [this.#acceptorKeyOf(i, this.#generateMerchant(this.merchantIndexOfShop(i)))])
    this.#accountIndex = new KeyIndex(merchants * 3, (m) => accountKeys(this.merchant(m).bankAccounts))
    for (let m = 0; m < merchants; m++) {
      const generated = this.#generateMerchant(m)
      const merchant = generated.merchant
      for (const key of accountKeys(merchant.bankAccounts)) this.#accountIndex.add(key, m)
      for (let i = merchant.firstShop; i < merchant.firstShop + merchant.shopCount; i++) {
        this.#nameIndex.add(this.#acceptorKeyOf(i, generated), i)
      }
    }
  }

  // ---- entities -------------------------------------------------------------

  merchant(index: number): SimMerchant {
    return this.#generateMerchant(index).merchant
  }

  shop(index: number): SimShop {
    this.#checkShop(index)
    return this.#buildShop(index, this.#generateMerchant(this.merchantIndexOfShop(index)))
  }

  merchantIndexOfShop(shopIndex: number): number {
    this.#checkShop(shopIndex)
    let lo = 0
    let hi = this.merchantCount - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1
      if ((this.#firstShop[mid] as number) <= shopIndex) lo = mid
      else hi = mid - 1
    }
    return lo
  }

  // ---- identifier lookups (O(1), no tables) ----------------------------------

  shopIndexByUid(uid: string): number | undefined {
    if (uid.length !== 22) return undefined
    const prefix = fromBase62(uid.slice(0, 6))
    if (prefix === undefined || prefix >= 2 ** 32) return undefined
    const index = this.#shopUidPerm.invert(prefix)
    if (index >= this.shopCount || this.#shopUid(index) !== uid) return undefined
    return index
  }

  merchantIndexByUid(uid: string): number | undefined {
    const at = uid.indexOf('@')
    if (at !== 22) return undefined
    const prefix = fromBase62(uid.slice(0, 6))
    if (prefix === undefined || prefix >= 2 ** 32) return undefined
    const index = this.#merchantUidPerm.invert(prefix)
    if (index >= this.merchantCount || this.merchant(index).uid !== uid) return undefined
    return index
  }

  /** The shop owning a terminal id (case-insensitive, surrounding spaces ignored). */
  shopIndexByTerminalId(terminalId: string): number | undefined {
    const id = terminalId.trim().toUpperCase()
    if (!/^[A-Z]{2}[0-9A-Z]{6}$/.test(id)) return undefined
    const value = Number.parseInt(id.slice(2), 36)
    if (value >= 2 ** 30) return undefined
    const plain = this.#terminalPerm.invert(value)
    const shopIndex = Math.floor(plain / MAX_TERMINALS)
    if (shopIndex >= this.shopCount) return undefined
    // Checked without generating the whole shop: this is the simulator's hot path.
    const generated = this.#generateMerchant(this.merchantIndexOfShop(shopIndex))
    const ordinal = plain % MAX_TERMINALS
    if (ordinal >= this.#terminalCount(shopIndex, generated.merchant) || !id.startsWith(generated.internals.acquirer.terminalPrefix)) return undefined
    return shopIndex
  }

  /** The uid of a shop, without generating the rest of it. */
  shopUid(index: number): string {
    this.#checkShop(index)
    return this.#shopUid(index)
  }

  /** The card acceptor id (DE 42) of a shop, without generating the rest of it. */
  merchantIdOfShop(index: number): string {
    this.#checkShop(index)
    return this.#merchantIdOf(index, this.#generateMerchant(this.merchantIndexOfShop(index)))
  }

  /**
   * What a card acceptor id (DE 42) names: one shop, or a merchant whose central
   * contract covers all its shops. Leading/trailing spaces are ignored.
   */
  resolveMerchantId(merchantId: string): { shop: number } | { merchant: number } | undefined {
    const id = merchantId.trim()
    if (!/^[0-9]{15}$/.test(id)) return undefined
    const value = Number(id.slice(5))
    if (value >= 2 ** 32) return undefined
    const plain = this.#merchantIdPerm.invert(value)
    if (plain % 2 === 0) {
      const shopIndex = plain / 2
      if (shopIndex >= this.shopCount) return undefined
      const generated = this.#generateMerchant(this.merchantIndexOfShop(shopIndex))
      return !generated.internals.sharedMerchantId && this.#merchantIdOf(shopIndex, generated) === id ? { shop: shopIndex } : undefined
    }
    const merchantIndex = (plain - 1) / 2
    if (merchantIndex >= this.merchantCount) return undefined
    const generated = this.#generateMerchant(merchantIndex)
    return generated.internals.sharedMerchantId && this.#merchantIdOf(generated.merchant.firstShop, generated) === id ? { merchant: merchantIndex } : undefined
  }

  /** The shop whose printed acceptor name and city normalise to the given ones. */
  shopIndexByAcceptorName(description: string, city: string): number | undefined {
    return this.#nameIndex.get(acceptorKey(description, city))
  }

  /** The merchant holding an account; `key` comes from `accountKey*` functions. */
  merchantIndexByAccountKey(key: string): number | undefined {
    return this.#accountIndex.get(key)
  }

  // ---- generation -------------------------------------------------------------

  #generateMerchant(index: number): GeneratedMerchant {
    const cached = this.#merchantCache.get(index)
    if (cached !== undefined) return cached
    const generated = this.#generateMerchantUncached(index)
    // A small cache: shops of one chain are usually asked for together.
    if (this.#merchantCache.size >= MERCHANT_CACHE_SIZE) this.#merchantCache.clear()
    this.#merchantCache.set(index, generated)
    return generated
  }

  #generateMerchantUncached(index: number): GeneratedMerchant {
    this.#checkMerchant(index)
    const rng = rngFor(this.seed, NS.merchant, index)
    const firstShop = this.#firstShop[index] as number
    const shopCount = (this.#firstShop[index + 1] as number) - firstShop
    const country = rng.weighted(COUNTRIES, COUNTRY_WEIGHTS)
    const categoryDef = rng.weighted(CATEGORIES, CATEGORY_WEIGHTS)
    const online = shopCount === 1 && rng.chance(categoryDef.onlineShare)
    const name = merchantName(rng, country, categoryDef, shopCount, online)
    const uid = this.#merchantUid(index, country.code)
    const hqCity = pickCity(rng, country)
    const acquirer = rng.pick(ACQUIRERS)
    const mcc = rng.pick(categoryDef.mccs)
    const sharedMerchantId = shopCount > 1 && rng.chance(0.35)
    const tags = rng.sample(categoryDef.tags, rng.int(1, 2))
    const url = `https://www.${slug(name)}.${country.tld}`
    const merchant: SimMerchant = {
      index,
      uid,
      name,
      logo: `${LOGO_BASE}${uid.slice(0, 22)}.png`,
      url,
      country: country.code,
      category: { name: categoryDef.name, logo: categoryLogo(categoryDef) },
      tags,
      online,
      firstShop,
      shopCount,
      bankAccounts: this.#bankAccounts(index, rng, country),
    }
    return { merchant, internals: { categoryIndex: CATEGORIES.indexOf(categoryDef), country, hqCity, acquirer, mcc, sharedMerchantId, shortName: printed(name, 15), printedName: printed(name, 25), onlineName: printed(`${name.replace(/\s+/g, '')}.${country.tld}`, 25) } }
  }

  #buildShop(index: number, generated: GeneratedMerchant): SimShop {
    const { merchant, internals } = generated
    const rng = rngFor(this.seed, NS.shop, index)
    const ordinal = index - merchant.firstShop
    const country = internals.country
    const categoryDef = CATEGORIES[internals.categoryIndex] as CategoryDef
    const city = this.#shopCity(rng, ordinal, internals)
    const online = merchant.online
    const street = streetAddress(rng, country)
    const coordinates = online ? undefined : { type: rng.weighted<CoordinatesType>(['rooftop', 'interpolated', 'approximate'], [70, 25, 5]), lat: round6(city.lat + rng.normal() * 0.012), long: round6(city.long + rng.normal() * 0.018) }
    const acceptorCity = printedCity(city)
    const acceptorName = acceptorNameOf(merchant, internals, ordinal, acceptorCity)
    const terminalCount = this.#terminalCount(index, merchant)
    const terminalIds: string[] = []
    for (let t = 0; t < terminalCount; t++) terminalIds.push(this.#terminalId(index, t, internals.acquirer))
    const tags = [...merchant.tags, ...rng.sample(GENERIC_TAGS, rng.int(0, 2))]
    const shop: SimShop = {
      index,
      uid: this.#shopUid(index),
      type: online ? 'online' : 'bricks',
      merchantIndex: merchant.index,
      merchantUid: merchant.uid,
      ordinal,
      category: { name: categoryDef.name, logo: categoryLogo(categoryDef) },
      tags,
      address: { street, city: city.name, zip: city.zip, country: country.code, areas: { '20': city.region, '30': city.district } },
      ...(coordinates === undefined ? {} : { coordinates }),
      url: online || merchant.shopCount === 1 ? merchant.url : `${merchant.url}/${country.storesPath}/${slug(city.district)}-${ordinal + 1}`,
      ...(online ? {} : { googlePlaceId: placeId(rng) }),
      card: {
        merchantId: this.#merchantIdOf(index, generated),
        merchantIdShared: internals.sharedMerchantId,
        terminalIds,
        acceptorName,
        acceptorCity,
        country: country.code,
        postalCode: city.zip,
        mcc: internals.mcc,
        acquirerId: internals.acquirer.id,
      },
    }
    return shop
  }

  /** The city must be the shop's first random draw: the name index relies on it. */
  #shopCity(rng: Rng, ordinal: number, internals: MerchantInternals): CityDef {
    return ordinal === 0 ? internals.hqCity : pickCity(rng, internals.country)
  }

  /** The shop's acceptor key without generating the rest of the shop (index build and probes). */
  #acceptorKeyOf(index: number, generated: GeneratedMerchant): string {
    const ordinal = index - generated.merchant.firstShop
    const city = this.#shopCity(rngFor(this.seed, NS.shop, index), ordinal, generated.internals)
    const acceptorCity = printedCity(city)
    return acceptorKey(acceptorNameOf(generated.merchant, generated.internals, ordinal, acceptorCity), acceptorCity)
  }

  #terminalCount(shopIndex: number, merchant: SimMerchant): number {
    return merchant.online ? 1 : rngFor(this.seed, NS.terminalCount, shopIndex).int(1, 4)
  }

  #merchantIdOf(shopIndex: number, generated: GeneratedMerchant): string {
    const plain = generated.internals.sharedMerchantId ? generated.merchant.index * 2 + 1 : shopIndex * 2
    return `${generated.internals.acquirer.id.slice(0, 3)}00${padDigits(this.#merchantIdPerm.permute(plain), 10)}`
  }

  #shopUid(index: number): string {
    return toBase62(this.#shopUidPerm.permute(index), 6) + randomChars(new Rng(hashInts(this.seed, NS.shopUid, index)), 16)
  }

  #merchantUid(index: number, country: string): string {
    return `${toBase62(this.#merchantUidPerm.permute(index), 6)}${randomChars(new Rng(hashInts(this.seed, NS.merchantUid, index)), 16)}@${country.toLowerCase()}`
  }

  #terminalId(shopIndex: number, ordinal: number, acquirer: AcquirerDef): string {
    return acquirer.terminalPrefix + this.#terminalPerm.permute(shopIndex * MAX_TERMINALS + ordinal).toString(36).toUpperCase().padStart(6, '0')
  }

  #bankAccounts(merchantIndex: number, rng: Rng, country: CountryDef): BankAccount[] {
    const free = (n: number): string => padDigits(this.#accountPerm.permute(merchantIndex * 4 + n), 8)
    const bank = rng.pick(banksOf(country.code))
    switch (country.code) {
      case 'CZ': {
        const prefix = rng.chance(0.2) ? '19' : undefined
        const number = czechAccountNumber(free(0)).replace(/^0+/, '')
        const iban = makeIban('CZ', `${bank.code}${(prefix ?? '').padStart(6, '0')}${number.padStart(10, '0')}`)
        const accounts: BankAccount[] = [{ scheme: 'certis', currency: 'CZK', ...(prefix === undefined ? {} : { prefix }), number, bankCode: bank.code, iban, bic: bank.bic }]
        if (rng.chance(0.3)) {
          const eurBank = rng.pick(banksOf('CZ'))
          const eurNumber = czechAccountNumber(free(1)).padStart(10, '0')
          accounts.push({ scheme: 'sepa', currency: 'EUR', iban: makeIban('CZ', `${eurBank.code}000000${eurNumber}`), bic: eurBank.bic })
        }
        return accounts
      }
      case 'SK':
        return [{ scheme: 'sepa', currency: 'EUR', iban: makeIban('SK', `${bank.code}000000${czechAccountNumber(free(0))}`), bic: bank.bic }]
      case 'DE':
        return [{ scheme: 'sepa', currency: 'EUR', iban: makeIban('DE', `${bank.code}00${free(0)}`), bic: bank.bic }]
      case 'AT':
        return [{ scheme: 'sepa', currency: 'EUR', iban: makeIban('AT', `${bank.code}000${free(0)}`), bic: bank.bic }]
      case 'PL':
        return [{ scheme: 'iban', currency: 'PLN', iban: makeIban('PL', `${bank.code}00000000${free(0)}`), bic: bank.bic }]
      case 'GB': {
        const sortCode = `${bank.sortPrefix ?? '00'}${padDigits(rng.int(0, 9999), 4)}`
        const number = free(0)
        return [{ scheme: 'uk', currency: 'GBP', sortCode, number, iban: makeIban('GB', `${bank.code}${sortCode}${number}`), bic: bank.bic }]
      }
      default:
        throw new Error(`no account scheme for country ${country.code}`)
    }
  }

  #checkShop(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.shopCount) {
      throw new SimDataError(`shop index ${index} is outside [0, ${this.shopCount})`, { code: 'SIM_DATA_NO_SUCH_SHOP', details: { index } })
    }
  }

  #checkMerchant(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.merchantCount) {
      throw new SimDataError(`merchant index ${index} is outside [0, ${this.merchantCount})`, { code: 'SIM_DATA_NO_SUCH_MERCHANT', details: { index } })
    }
  }
}

interface GeneratedMerchant {
  merchant: SimMerchant
  internals: MerchantInternals
}

/** Generation facts shops inherit from their merchant; not part of the merchant's data. */
interface MerchantInternals {
  categoryIndex: number
  country: CountryDef
  shortName: string
  printedName: string
  onlineName: string
  hqCity: CityDef
  acquirer: AcquirerDef
  mcc: string
  sharedMerchantId: boolean
}

/** The matching key of a printed acceptor name and city. */
export function acceptorKey(name: string, city: string): string {
  return `${normaliseText(name)}|${normaliseText(city)}`
}

/** Key of a Czech domestic account (prefix and number without leading zeros). */
export function accountKeyCzech(prefix: string | undefined, number: string, bankCode: string): string {
  const p = (prefix ?? '').replace(/^0+/, '') || '0'
  return `CZ:${p}-${number.replace(/^0+/, '')}/${bankCode}`
}

/** Key of a UK account (sort code digits only). */
export function accountKeyUk(sortCode: string, number: string): string {
  return `UK:${sortCode.replace(/-/g, '')}:${number}`
}

export function accountKeyIban(iban: string): string {
  return `IBAN:${compactIban(iban)}`
}

export function accountKeys(accounts: readonly BankAccount[]): string[] {
  const keys: string[] = []
  for (const account of accounts) {
    keys.push(accountKeyIban(account.iban))
    if (account.scheme === 'certis') keys.push(accountKeyCzech(account.prefix, account.number, account.bankCode))
    if (account.scheme === 'uk') keys.push(accountKeyUk(account.sortCode, account.number))
  }
  return keys
}

/**
 * Shop counts per merchant as prefix sums (`result[m]` is merchant m's first shop):
 * a share of single-shop businesses and a long tail of chains whose sizes follow a
 * power law (the largest capped), the way retail looks.
 */
function chainSizes(shops: number, merchants: number): Int32Array {
  const sizes = new Float64Array(merchants).fill(1)
  const extra = shops - merchants
  const chains = merchants === 1 ? 1 : Math.max(1, Math.round(merchants * (1 - SINGLE_SHOP_SHARE)))
  let weightSum = 0
  for (let r = 0; r < chains; r++) weightSum += (r + 1) ** -0.8
  let given = 0
  for (let r = 0; r < chains && extra > 0; r++) {
    const share = Math.min(MAX_CHAIN_SIZE - 1, Math.floor((extra * (r + 1) ** -0.8) / weightSum))
    sizes[r] = (sizes[r] as number) + share
    given += share
  }
  let rest = extra - given
  // What the cap or rounding left over is spread evenly over the chains.
  const even = Math.floor(rest / chains)
  for (let r = 0; r < chains; r++) sizes[r] = (sizes[r] as number) + even
  rest -= even * chains
  for (let r = 0; rest > 0; r = (r + 1) % chains, rest--) sizes[r] = (sizes[r] as number) + 1
  const first = new Int32Array(merchants + 1)
  for (let m = 0; m < merchants; m++) first[m + 1] = (first[m] as number) + (sizes[m] as number)
  return first
}

const COUNTRY_WEIGHTS = COUNTRIES.map((c) => c.weight)
const CATEGORY_WEIGHTS = CATEGORIES.map((c) => c.weight)
const CITY_WEIGHTS = new Map(COUNTRIES.map((c) => [c, c.cities.map((city) => city.weight)]))
const PRINTED_CITY = new Map<CityDef, string>()

function pickCity(rng: Rng, country: CountryDef): CityDef {
  return rng.weighted(country.cities, CITY_WEIGHTS.get(country) as number[])
}

function acceptorNameOf(merchant: SimMerchant, internals: MerchantInternals, ordinal: number, acceptorCity: string): string {
  if (merchant.online) return internals.onlineName
  if (merchant.shopCount > 1) return `${internals.shortName} ${padDigits(ordinal + 1, 4)} ${acceptorCity}`.slice(0, 25).trimEnd()
  return internals.printedName
}

/** Prague prints its district ("PRAHA 5"); other cities print their name. */
function printedCity(city: CityDef): string {
  let text = PRINTED_CITY.get(city)
  if (text === undefined) {
    text = printed(/^\S+ [0-9]+$/.test(city.district) ? city.district : city.name, 13)
    PRINTED_CITY.set(city, text)
  }
  return text
}

function merchantName(rng: Rng, country: CountryDef, category: CategoryDef, shopCount: number, online: boolean): string {
  if (shopCount >= 3 || online || rng.chance(0.25)) {
    const syllables = rng.int(2, 3)
    let brand = ''
    for (let i = 0; i < syllables; i++) brand += rng.pick(BRAND_SYLLABLES)
    return brand.charAt(0).toUpperCase() + brand.slice(1)
  }
  const noun = category.noun[country.language]
  const word = rng.pick(LOCAL_WORDS[country.language])
  return country.language === 'en' ? `${word} ${noun}` : `${noun} ${word}`
}

function streetAddress(rng: Rng, country: CountryDef): string {
  const street = rng.pick(country.streets)
  switch (country.code) {
    case 'CZ':
    case 'SK':
      return `${street} ${rng.int(1, 2999)}/${rng.int(1, 80)}`
    case 'GB':
      return `${rng.int(1, 300)} ${street}`
    default:
      return `${street} ${rng.int(1, 150)}`
  }
}

function placeId(rng: Rng): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'
  let id = 'ChIJ'
  for (let i = 0; i < 23; i++) id += alphabet.charAt(rng.int(0, alphabet.length - 1))
  return id
}

function randomChars(rng: Rng, count: number): string {
  let out = ''
  for (let i = 0; i < count; i++) out += base62Char(rng.nextU32())
  return out
}

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6
}
