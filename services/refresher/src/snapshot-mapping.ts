import { merchantSnapshotData, shopSnapshotData, type Merchant as ApiMerchant, type Shop as ApiShop } from '@tep/enrichment-client'
import type { MerchantData, ShopData } from './refresh-input.ts'

// The refresher stores what the API answered under the uid it names; the
// mapping itself is the client's (shared with transaction-ingest).

export function shopData(shop: ApiShop): ShopData {
  return shopSnapshotData(shop)
}

export function merchantData(merchant: ApiMerchant): MerchantData {
  return merchantSnapshotData(merchant)
}
