import type { Merchant as ApiMerchant, Shop as ApiShop } from '@tep/enrichment-client'
import type { MerchantData, ShopData } from './refresh-input.ts'

// The API omits any value it does not have (spec rule 6); the Avro contract
// says null for "not returned". `?? null` maps one onto the other.

export function shopData(shop: ApiShop): ShopData {
  const address = shop.location?.address
  const coordinates = shop.location?.coordinates
  return {
    uid: shop.uid,
    type: shop.type ?? null,
    tags: shop.tags ?? null,
    merchantUid: shop.merchantUid ?? null,
    category:
      shop.category === undefined
        ? null
        : { name: shop.category.name ?? null, logo: shop.category.logo ?? null },
    location:
      shop.location === undefined
        ? null
        : {
            address:
              address === undefined
                ? null
                : {
                    street: address.street ?? null,
                    city: address.city ?? null,
                    zip: address.zip ?? null,
                    country: address.country ?? null,
                    areas: address.areas ?? null,
                  },
            coordinates:
              coordinates === undefined
                ? null
                : {
                    type: coordinates.type ?? null,
                    lat: coordinates.lat ?? null,
                    long: coordinates.long ?? null,
                  },
          },
    url: shop.url ?? null,
    googlePlaceId: shop.googlePlaceId ?? null,
  }
}

export function merchantData(merchant: ApiMerchant): MerchantData {
  return {
    uid: merchant.uid,
    name: merchant.name ?? null,
    logo: merchant.logo ?? null,
    url: merchant.url ?? null,
    categoryName: merchant.category?.name ?? null,
  }
}
