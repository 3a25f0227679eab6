import { GENERIC_TAGS, Rng, hashInts } from '@tep/sim-data'
import { ApiError } from '../errors.ts'
import type { InvalidationItem } from './invalidation-log.ts'
import type { World } from './world.ts'

/**
 * Changes to the world, each announced on the invalidation feed. They come from
 * the background mutation process or from `POST /__admin/mutations`; targets left
 * out are picked by a PRNG seeded from the data seed and the mutation number, so a
 * run with the same seed and the same sequence of calls changes the same things.
 */
export type MutationRequest =
  | { kind: 'shopUpdate'; shopUid?: string }
  | { kind: 'rebrand'; merchantUid?: string; name?: string; logo?: string }
  | { kind: 'remap'; handle?: string; toShopUid?: string }
  | { kind: 'deleteShop'; shopUid?: string }
  | { kind: 'deleteMerchant'; merchantUid?: string }
  | { kind: 'random'; count?: number }

export const MUTATION_KINDS = ['shopUpdate', 'rebrand', 'remap', 'deleteShop', 'deleteMerchant', 'random'] as const

/** Tags that appear over time (the product's tag set grows). */
const NEW_TAGS = ['Vegan Options', 'Pet Friendly', 'Self-Checkout', 'Drive-Through', 'Gift Cards', 'Late Opening', 'Refill Station', 'Apple Pay', 'Loyalty App']
const REBRAND_SUFFIXES = ['Fresh', 'Express', 'Plus', 'City', 'Go', 'One', 'Market', 'Studio']
const NS_MUTATION = 77
const RANDOM_MAX = 10_000
/** Random deletions of whole merchants keep to small ones, so one mutation does not flood the feed. */
const RANDOM_DELETE_MAX_SHOPS = 10

function notFound(what: string, id: string): ApiError {
  return new ApiError(404, 'NOT_FOUND', `${what} ${JSON.stringify(id)} does not exist or is already deleted`)
}

function badRequest(message: string): ApiError {
  return new ApiError(400, 'INVALID_MUTATION', message)
}

export function parseMutation(body: unknown): MutationRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the body must be a JSON object with "kind"')
  const o = body as Record<string, unknown>
  if (typeof o.kind !== 'string' || !(MUTATION_KINDS as readonly string[]).includes(o.kind)) {
    throw badRequest(`"kind" must be one of ${MUTATION_KINDS.join(', ')}, got ${JSON.stringify(o.kind)}`)
  }
  for (const [key, value] of Object.entries(o)) {
    if (key === 'kind') continue
    if (key === 'count') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > RANDOM_MAX) throw badRequest(`"count" must be an integer from 1 to ${RANDOM_MAX}`)
    } else if (!['shopUid', 'merchantUid', 'name', 'logo', 'handle', 'toShopUid'].includes(key)) {
      throw badRequest(`unknown member ${JSON.stringify(key)}`)
    } else if (typeof value !== 'string' || value === '') {
      throw badRequest(`"${key}" must be a non-empty string`)
    }
  }
  return o as MutationRequest
}

export class Mutator {
  readonly #world: World

  constructor(world: World) {
    this.#world = world
  }

  apply(request: MutationRequest): InvalidationItem[] {
    const world = this.#world
    const rng = new Rng(hashInts(world.data.seed, NS_MUTATION, world.mutationCount++))
    switch (request.kind) {
      case 'shopUpdate':
        return this.#shopUpdate(rng, request.shopUid === undefined ? this.#randomLiveShop(rng) : this.#liveShop(request.shopUid))
      case 'rebrand':
        return this.#rebrand(rng, request.merchantUid === undefined ? this.#randomLiveMerchant(rng) : this.#liveMerchant(request.merchantUid), request.name, request.logo)
      case 'remap':
        return this.#remap(rng, request.handle, request.toShopUid)
      case 'deleteShop':
        return this.#deleteShop(request.shopUid === undefined ? this.#randomLiveShop(rng) : this.#liveShop(request.shopUid))
      case 'deleteMerchant':
        return this.#deleteMerchant(request.merchantUid === undefined ? this.#randomSmallMerchant(rng) : this.#liveMerchant(request.merchantUid))
      case 'random': {
        const items: InvalidationItem[] = []
        for (let i = 0; i < (request.count ?? 1); i++) {
          const kind = rng.weighted(['shopUpdate', 'rebrand', 'remap', 'deleteShop', 'deleteMerchant'] as const, [55, 15, 15, 10, 5])
          items.push(...this.apply({ kind }))
        }
        return items
      }
    }
  }

  #liveShop(uid: string): number {
    const index = this.#world.data.shopIndexByUid(uid)
    if (index === undefined || !this.#world.isShopLive(index)) throw notFound('shop', uid)
    return index
  }

  #liveMerchant(uid: string): number {
    const index = this.#world.resolveMerchantUid(uid)
    if (index === undefined) throw notFound('merchant', uid)
    return index
  }

  #randomLiveShop(rng: Rng): number {
    for (let attempt = 0; attempt < 1_000; attempt++) {
      const index = rng.int(0, this.#world.data.shopCount - 1)
      if (this.#world.isShopLive(index)) return index
    }
    throw new ApiError(409, 'NO_LIVE_SHOP', 'no live shop left to change')
  }

  #randomLiveMerchant(rng: Rng): number {
    for (let attempt = 0; attempt < 1_000; attempt++) {
      const index = rng.int(0, this.#world.data.merchantCount - 1)
      if (this.#world.isMerchantLive(index)) return index
    }
    throw new ApiError(409, 'NO_LIVE_MERCHANT', 'no live merchant left to change')
  }

  #randomSmallMerchant(rng: Rng): number {
    for (let attempt = 0; attempt < 1_000; attempt++) {
      const index = this.#randomLiveMerchant(rng)
      if (this.#world.data.merchant(index).shopCount <= RANDOM_DELETE_MAX_SHOPS) return index
    }
    return this.#randomLiveMerchant(rng)
  }

  #shopUpdate(rng: Rng, shopIndex: number): InvalidationItem[] {
    const world = this.#world
    const current = world.shopJson(shopIndex)
    const previous = world.shopPatches.get(shopIndex)
    const candidates = [...NEW_TAGS, ...GENERIC_TAGS].filter((t) => !current.tags.includes(t))
    const tags = candidates.length > 0 ? [...current.tags, rng.pick(candidates)] : current.tags.slice(1)
    const patch = { ...previous, version: (previous?.version ?? 0) + 1, tags }
    const coordinates = current.location.coordinates
    if (coordinates !== undefined && rng.chance(0.5)) {
      // The shop moved a few doors down the street.
      const street = current.location.address.street.replace(/[0-9]+/, () => String(rng.int(1, 999)))
      patch.street = street
      patch.coordinates = { type: 'rooftop', lat: round6(coordinates.lat + rng.normal() * 0.0005), long: round6(coordinates.long + rng.normal() * 0.0005) }
    }
    world.shopPatches.set(shopIndex, patch)
    return [world.log.append('shop', 'update', current.uid, world.clock.now())]
  }

  #rebrand(rng: Rng, merchantIndex: number, name: string | undefined, logo: string | undefined): InvalidationItem[] {
    const world = this.#world
    const current = world.merchantJson(merchantIndex)
    const previous = world.merchantPatches.get(merchantIndex)
    const version = (previous?.version ?? 0) + 1
    const base = world.data.merchant(merchantIndex)
    world.merchantPatches.set(merchantIndex, {
      version,
      name: name ?? `${base.name} ${rng.pick(REBRAND_SUFFIXES)}`,
      logo: logo ?? `${base.logo}?v=${version + 1}`,
    })
    return [world.log.append('merchant', 'update', current.uid, world.clock.now())]
  }

  #remap(rng: Rng, handle: string | undefined, toShopUid: string | undefined): InvalidationItem[] {
    const world = this.#world
    let target = handle
    if (target === undefined) {
      if (world.handles.size === 0) {
        // Nobody has looked anything up yet: remap the mapping of one terminal, as
        // if its transactions had been attributed to the wrong shop.
        const shop = world.data.shop(this.#randomLiveShop(rng))
        target = world.resolveCard({ terminalId: shop.card.terminalIds[0] }).handle
      } else {
        // Map iteration order is insertion order, so this pick is deterministic too.
        const skip = rng.int(0, world.handles.size - 1)
        let i = 0
        for (const known of world.handles.keys()) {
          if (i++ === skip) {
            target = known
            break
          }
        }
      }
    } else if (!world.handles.has(target) && !world.remaps.has(target)) {
      throw notFound('handle', target)
    }
    const handleKey = target as string
    const currentShop = world.remaps.get(handleKey) ?? world.handles.get(handleKey) ?? -1
    let shopIndex: number
    if (toShopUid !== undefined) shopIndex = this.#liveShop(toShopUid)
    else {
      do shopIndex = this.#randomLiveShop(rng)
      while (shopIndex === currentShop && world.data.shopCount > 1)
    }
    world.remaps.set(handleKey, shopIndex)
    world.handles.set(handleKey, shopIndex)
    return [world.log.append('handle', 'remap', handleKey, world.clock.now())]
  }

  #deleteShop(shopIndex: number): InvalidationItem[] {
    const world = this.#world
    world.deletedShops.add(shopIndex)
    return [world.log.append('shop', 'delete', world.data.shop(shopIndex).uid, world.clock.now())]
  }

  #deleteMerchant(merchantIndex: number): InvalidationItem[] {
    const world = this.#world
    const merchant = world.data.merchant(merchantIndex)
    const items: InvalidationItem[] = []
    const now = world.clock.now()
    for (let i = merchant.firstShop; i < merchant.firstShop + merchant.shopCount; i++) {
      if (world.deletedShops.has(i)) continue
      world.deletedShops.add(i)
      items.push(world.log.append('shop', 'delete', world.data.shop(i).uid, now))
    }
    world.deletedMerchants.add(merchantIndex)
    items.push(world.log.append('merchant', 'delete', merchant.uid, now))
    return items
  }
}

function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6
}
