import type { Category, Merchant, Shop } from './model.ts'
import {
  drift,
  fail,
  isObject,
  jsonType,
  put,
  readId,
  readNumber,
  readObject,
  readText,
  readTextList,
  reportUnknownMembers,
  type ReadContext,
} from './tolerant-reading.ts'

/**
 * Shop and merchant answers (`/shops/{id}`, `/merchants/{id}`, and the `shop`
 * and `merchant` of a `complete` find result), read tolerantly
 * (tolerant-reading.ts): the modelled members come back in their modelled
 * types or not at all, so that the Avro snapshots made of them
 * (event-snapshots.ts) never meet a number where a string is written. Members
 * the client does not model are kept as sent (and reported).
 */

export const SHOP_MEMBERS: ReadonlySet<string> = new Set([
  'uid',
  'type',
  'merchantUid',
  'tags',
  'category',
  'location',
  'url',
  'googlePlaceId',
])
const MERCHANT_MEMBERS: ReadonlySet<string> = new Set(['uid', 'name', 'logo', 'url', 'category', 'tags'])
const CATEGORY_MEMBERS: ReadonlySet<string> = new Set(['name', 'logo'])
const LOCATION_MEMBERS: ReadonlySet<string> = new Set(['address', 'coordinates'])
const ADDRESS_MEMBERS: ReadonlySet<string> = new Set(['street', 'city', 'zip', 'country', 'areas'])
const COORDINATES_MEMBERS: ReadonlySet<string> = new Set(['type', 'lat', 'long'])

/**
 * The entity's uid. Rule 6 ("Any response value may therefore be absent")
 * covers `uid` too: when the caller knows which entity it asked for
 * (`knownUid`), an answer without one is that entity. Without a known uid
 * nothing says which entity it is, and the answer is a breach.
 */
function entityUid(ctx: ReadContext, value: Record<string, unknown>, path: string, knownUid: string | undefined): string {
  const uid = readId(ctx, value.uid, `${path}.uid`, 'fail')
  if (uid !== undefined) return uid
  if (knownUid === undefined) fail(ctx, `${path}.uid`, 'missing or not a non-empty string')
  drift(ctx, `${path}.uid`, 'absent', 'the uid asked for stands in')
  return knownUid
}

/** Members the client does not model, kept as sent. */
function unmodelled(value: Record<string, unknown>, known: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const name in value) if (!known.has(name)) out[name] = value[name]
  return out
}

function readCategory(ctx: ReadContext, value: unknown, path: string): Category | undefined {
  const category = readObject(ctx, value, path)
  if (category === undefined) return undefined
  reportUnknownMembers(ctx, category, CATEGORY_MEMBERS, path)
  const out: Category = {}
  put(out, 'name', readText(ctx, category.name, `${path}.name`))
  put(out, 'logo', readText(ctx, category.logo, `${path}.logo`))
  return out
}

function readAreas(ctx: ReadContext, value: unknown, path: string): Record<string, string> | undefined {
  const areas = readObject(ctx, value, path)
  if (areas === undefined) return undefined
  const out: Record<string, string> = {}
  for (const key in areas) {
    const text = readText(ctx, areas[key], `${path}.*`)
    if (text !== undefined) out[key] = text
  }
  return out
}

function readLocation(ctx: ReadContext, value: unknown, path: string): Shop['location'] {
  const location = readObject(ctx, value, path)
  if (location === undefined) return undefined
  reportUnknownMembers(ctx, location, LOCATION_MEMBERS, path)
  const out: NonNullable<Shop['location']> = {}
  const addressPath = `${path}.address`
  const address = readObject(ctx, location.address, addressPath)
  if (address !== undefined) {
    reportUnknownMembers(ctx, address, ADDRESS_MEMBERS, addressPath)
    const a: NonNullable<NonNullable<Shop['location']>['address']> = {}
    put(a, 'street', readText(ctx, address.street, `${addressPath}.street`))
    put(a, 'city', readText(ctx, address.city, `${addressPath}.city`))
    put(a, 'zip', readText(ctx, address.zip, `${addressPath}.zip`))
    put(a, 'country', readText(ctx, address.country, `${addressPath}.country`))
    put(a, 'areas', readAreas(ctx, address.areas, `${addressPath}.areas`))
    out.address = a
  }
  const coordinatesPath = `${path}.coordinates`
  const coordinates = readObject(ctx, location.coordinates, coordinatesPath)
  if (coordinates !== undefined) {
    reportUnknownMembers(ctx, coordinates, COORDINATES_MEMBERS, coordinatesPath)
    const c: NonNullable<NonNullable<Shop['location']>['coordinates']> = {}
    put(c, 'type', readText(ctx, coordinates.type, `${coordinatesPath}.type`))
    put(c, 'lat', readNumber(ctx, coordinates.lat, `${coordinatesPath}.lat`))
    put(c, 'long', readNumber(ctx, coordinates.long, `${coordinatesPath}.long`))
    out.coordinates = c
  }
  return out
}

/** A shop answer; `knownUid` (the id asked for) stands in for an absent `uid`. */
export function parseShop(ctx: ReadContext, value: unknown, path = 'body', knownUid?: string): Shop {
  if (!isObject(value)) fail(ctx, path, `is ${value === undefined ? 'missing' : jsonType(value)}, not a shop object`)
  reportUnknownMembers(ctx, value, SHOP_MEMBERS, path)
  const shop: Shop = { ...unmodelled(value, SHOP_MEMBERS), uid: entityUid(ctx, value, path, knownUid) }
  put(shop, 'type', readText(ctx, value.type, `${path}.type`))
  put(shop, 'merchantUid', readId(ctx, value.merchantUid, `${path}.merchantUid`, 'ignore'))
  put(shop, 'tags', readTextList(ctx, value.tags, `${path}.tags`))
  put(shop, 'category', readCategory(ctx, value.category, `${path}.category`))
  put(shop, 'location', readLocation(ctx, value.location, `${path}.location`))
  put(shop, 'url', readText(ctx, value.url, `${path}.url`))
  put(shop, 'googlePlaceId', readText(ctx, value.googlePlaceId, `${path}.googlePlaceId`))
  return shop
}

/** A merchant answer; as `parseShop`, `knownUid` stands in for an absent `uid`. */
export function parseMerchant(ctx: ReadContext, value: unknown, path = 'body', knownUid?: string): Merchant {
  if (!isObject(value))
    fail(ctx, path, `is ${value === undefined ? 'missing' : jsonType(value)}, not a merchant object`)
  reportUnknownMembers(ctx, value, MERCHANT_MEMBERS, path)
  const merchant: Merchant = {
    ...unmodelled(value, MERCHANT_MEMBERS),
    uid: entityUid(ctx, value, path, knownUid),
  }
  put(merchant, 'name', readText(ctx, value.name, `${path}.name`))
  put(merchant, 'logo', readText(ctx, value.logo, `${path}.logo`))
  put(merchant, 'url', readText(ctx, value.url, `${path}.url`))
  put(merchant, 'category', readCategory(ctx, value.category, `${path}.category`))
  put(merchant, 'tags', readTextList(ctx, value.tags, `${path}.tags`))
  return merchant
}
