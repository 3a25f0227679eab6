import type { Merchant as MerchantEvent, Shop as ShopEvent } from '@tep/schemas'
import type { Merchant, Shop } from './model.ts'

/** A Shop event without the fields the writer adds (when it was fetched, which invalidation caused it). */
export type ShopSnapshotData = Omit<ShopEvent, 'fetchedAt' | 'invalidationItemId'>
export type MerchantSnapshotData = Omit<MerchantEvent, 'fetchedAt' | 'invalidationItemId'>

/** The members of an answer that the snapshot uses (callers may hold narrower port types). */
export type ShopAnswer = Pick<Shop, 'uid' | 'type' | 'merchantUid' | 'tags' | 'category' | 'location' | 'url' | 'googlePlaceId'>
export type MerchantAnswer = Pick<Merchant, 'uid' | 'name' | 'logo' | 'url' | 'category'>

// The API omits any value it does not have (spec rule 6); the Avro contract says
// null for "not returned". `?? null` maps one onto the other, and a nested
// object that is absent or null becomes null (JSON null is read as absent too). One mapping for
// every consumer of the client (transaction-ingest on a table miss, the
// refresher), so the compacted topics never hold two shapes of the same answer.

/** `uid` defaults to the answer's own; callers that asked by uid pass theirs as the key. */
export function shopSnapshotData(shop: ShopAnswer, uid: string = shop.uid): ShopSnapshotData {
  const address = shop.location?.address
  const coordinates = shop.location?.coordinates
  return {
    uid,
    type: shop.type ?? null,
    tags: shop.tags ?? null,
    merchantUid: shop.merchantUid ?? null,
    category: shop.category == null ? null : { name: shop.category.name ?? null, logo: shop.category.logo ?? null },
    location:
      shop.location == null
        ? null
        : {
            address:
              address == null
                ? null
                : {
                    street: address.street ?? null,
                    city: address.city ?? null,
                    zip: address.zip ?? null,
                    country: address.country ?? null,
                    areas: address.areas ?? null,
                  },
            coordinates:
              coordinates == null ? null : { type: coordinates.type ?? null, lat: coordinates.lat ?? null, long: coordinates.long ?? null },
          },
    url: shop.url ?? null,
    googlePlaceId: shop.googlePlaceId ?? null,
  }
}

export function merchantSnapshotData(merchant: MerchantAnswer, uid: string = merchant.uid): MerchantSnapshotData {
  return {
    uid,
    name: merchant.name ?? null,
    logo: merchant.logo ?? null,
    url: merchant.url ?? null,
    categoryName: merchant.category?.name ?? null,
  }
}
