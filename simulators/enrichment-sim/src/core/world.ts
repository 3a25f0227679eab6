import { hash } from 'node:crypto'
import { accountKeyCzech, accountKeyIban, accountKeyUk, matchCard, matchTransfer, normaliseText } from '@tep/sim-data'
import type { SimCoordinates, SimDataset, TransferScheme } from '@tep/sim-data'
import type { LookupInput } from './input-validation.ts'
import { InvalidationLog } from './invalidation-log.ts'
import type { SimClock } from './sim-clock.ts'

/** Shop as the API returns it (OpenAPI `Shop`). */
export interface ApiShop {
  uid: string
  type: string
  merchantUid: string
  tags: string[]
  category: { name: string; logo: string }
  location: {
    address: { street: string; city: string; zip: string; country: string; areas: Record<string, string> }
    coordinates?: { type: string; lat: number; long: number }
  }
  url: string
  googlePlaceId?: string
}

/** Merchant as the API returns it (OpenAPI `Merchant`). */
export interface ApiMerchant {
  uid: string
  name: string
  logo: string
  url: string
  category: { name: string; logo: string }
  tags: string[]
}

export interface ShopPatch {
  version: number
  tags?: string[]
  street?: string
  coordinates?: SimCoordinates
  url?: string
}

export interface MerchantPatch {
  version: number
  name?: string
  logo?: string
}

export interface Resolution {
  handle: string
  /** The live shop the input maps to, if any. */
  shopIndex: number | undefined
}

/** Handles remembered for `/shops/{handle}` and remaps; beyond this, new ones are answered but not remembered. */
const HANDLE_MEMORY_LIMIT = 1_000_000

/**
 * The simulator's mutable world: the seeded data set plus what changed since
 * start (attribute patches, deletions, remapped handles) and the invalidation
 * feed that announces those changes.
 */
export class World {
  readonly data: SimDataset
  readonly clock: SimClock
  readonly log = new InvalidationLog()
  readonly shopPatches = new Map<number, ShopPatch>()
  readonly merchantPatches = new Map<number, MerchantPatch>()
  readonly deletedShops = new Set<number>()
  readonly deletedMerchants = new Set<number>()
  /** handle → shop index it was remapped to (-1: to no shop). Wins over matching. */
  readonly remaps = new Map<string, number>()
  /** handle → shop index of its last answer (-1: not found). */
  readonly handles = new Map<string, number>()
  mutationCount = 0

  constructor(data: SimDataset, clock: SimClock) {
    this.data = data
    this.clock = clock
  }

  reset(): void {
    this.log.clear()
    this.shopPatches.clear()
    this.merchantPatches.clear()
    this.deletedShops.clear()
    this.deletedMerchants.clear()
    this.remaps.clear()
    this.handles.clear()
    this.mutationCount = 0
  }

  isMerchantLive(merchantIndex: number): boolean {
    return !this.deletedMerchants.has(merchantIndex)
  }

  isShopLive(shopIndex: number): boolean {
    return !this.deletedShops.has(shopIndex) && (this.deletedMerchants.size === 0 || this.isMerchantLive(this.data.merchantIndexOfShop(shopIndex)))
  }

  /** The first live shop of a merchant: where transfers to the merchant are attributed. */
  mainShopOf(merchantIndex: number): number | undefined {
    if (!this.isMerchantLive(merchantIndex)) return undefined
    const merchant = this.data.merchant(merchantIndex)
    for (let i = merchant.firstShop; i < merchant.firstShop + merchant.shopCount; i++) if (!this.deletedShops.has(i)) return i
    return undefined
  }

  /** A shop uid or a handle → live shop index. */
  resolveShopId(id: string): number | undefined {
    const byUid = this.data.shopIndexByUid(id)
    if (byUid !== undefined) return this.isShopLive(byUid) ? byUid : undefined
    const remapped = this.remaps.get(id)
    const target = remapped ?? this.handles.get(id)
    return target !== undefined && target >= 0 && this.isShopLive(target) ? target : undefined
  }

  resolveMerchantUid(uid: string): number | undefined {
    const index = this.data.merchantIndexByUid(uid)
    return index !== undefined && this.isMerchantLive(index) ? index : undefined
  }

  resolveCard(input: LookupInput): Resolution {
    const handle = this.handleOf(cardPattern(input))
    const remapped = this.remaps.get(handle)
    let shopIndex: number | undefined
    if (remapped !== undefined) shopIndex = remapped >= 0 && this.isShopLive(remapped) ? remapped : undefined
    else {
      const match = matchCard(this.data, input)
      shopIndex = match !== undefined && this.isShopLive(match.shopIndex) ? match.shopIndex : undefined
    }
    this.rememberHandle(handle, shopIndex)
    return { handle, shopIndex }
  }

  resolveTransfer(scheme: TransferScheme, input: LookupInput): Resolution {
    const handle = this.handleOf(transferPattern(scheme, input))
    const remapped = this.remaps.get(handle)
    let shopIndex: number | undefined
    if (remapped !== undefined) shopIndex = remapped >= 0 && this.isShopLive(remapped) ? remapped : undefined
    else {
      const match = matchTransfer(this.data, scheme, input)
      shopIndex = match === undefined ? undefined : this.mainShopOf(match.merchantIndex)
    }
    this.rememberHandle(handle, shopIndex)
    return { handle, shopIndex }
  }

  /** Handles are 22 base-62 characters derived from the seed and the normalised input pattern. */
  handleOf(pattern: string): string {
    const digest = hash('sha256', `${this.data.seed}|${pattern}`, 'buffer')
    let out = ''
    for (let i = 0; i < 22; i++) out += BASE62.charAt((digest[i] as number) % 62)
    return out
  }

  /** Records what a handle maps to, for `/shops/{handle}` and remaps. */
  rememberHandle(handle: string, shopIndex: number | undefined): void {
    if (this.handles.size < HANDLE_MEMORY_LIMIT || this.handles.has(handle)) this.handles.set(handle, shopIndex ?? -1)
  }

  shopJson(shopIndex: number): ApiShop {
    const shop = this.data.shop(shopIndex)
    const patch = this.shopPatches.get(shopIndex)
    const coordinates = patch?.coordinates ?? shop.coordinates
    return {
      uid: shop.uid,
      type: shop.type,
      merchantUid: shop.merchantUid,
      tags: [...(patch?.tags ?? shop.tags)],
      category: { ...shop.category },
      location: {
        address: { street: patch?.street ?? shop.address.street, city: shop.address.city, zip: shop.address.zip, country: shop.address.country, areas: { ...shop.address.areas } },
        ...(coordinates === undefined ? {} : { coordinates: { ...coordinates } }),
      },
      url: patch?.url ?? shop.url,
      ...(shop.googlePlaceId === undefined ? {} : { googlePlaceId: shop.googlePlaceId }),
    }
  }

  merchantJson(merchantIndex: number): ApiMerchant {
    const merchant = this.data.merchant(merchantIndex)
    const patch = this.merchantPatches.get(merchantIndex)
    return {
      uid: merchant.uid,
      name: patch?.name ?? merchant.name,
      logo: patch?.logo ?? merchant.logo,
      url: merchant.url,
      category: { ...merchant.category },
      tags: [...merchant.tags],
    }
  }
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

const id = (value: string | undefined): string => (value ?? '').trim().toUpperCase()
const text = (value: string | undefined): string => normaliseText(value ?? '')

/**
 * The identifying part of a card input. Amount, date, MCC and the like do not
 * change which shop a transaction belongs to, so they are not part of its handle.
 */
export function cardPattern(input: LookupInput): string {
  return `card|${id(input.merchantId)}|${id(input.terminalId)}|${text(input.description)}|${text(input.city)}|${id(input.country)}`
}

export function transferPattern(scheme: TransferScheme, input: LookupInput): string {
  const present = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim())
  const accountNumber = present(input.accountNumber)
  if (scheme === 'certis' && accountNumber !== undefined && present(input.bankCode) !== undefined) {
    return `transfer|${accountKeyCzech(present(input.accountPrefix), accountNumber, present(input.bankCode) as string)}`
  }
  if (scheme === 'uk' && accountNumber !== undefined && present(input.sortCode) !== undefined) {
    return `transfer|${accountKeyUk(present(input.sortCode) as string, accountNumber)}`
  }
  return `transfer|${accountKeyIban(present(input.iban) ?? '')}`
}
