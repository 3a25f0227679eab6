import { SimDataset, type DatasetOptions, type SimMerchant } from '@tep/sim-data'
import { hashKey } from '../core/random.ts'
import type { CardShop, MerchantPayee, MerchantSource } from './merchant-source.ts'

/** How far `payee(i)` looks for a merchant with a Czech (CZK) account. */
const PAYEE_SEARCH = 64

/**
 * Card shops and merchant accounts of the enrichment simulator's data set
 * (`@tep/sim-data`), so that the bank's card payments and transfers resolve to
 * shops and merchants there. With the same dataset options as the enrichment
 * simulator (default seed 1, 50000 shops, 5000 merchants) the two agree.
 */
export function simDataMerchantSource(options: DatasetOptions | SimDataset = {}): MerchantSource {
  const dataset = options instanceof SimDataset ? options : new SimDataset(options)
  const czechAccount = (m: SimMerchant) => m.bankAccounts.find((a) => a.scheme === 'certis' && a.currency === 'CZK')
  // sim-data regenerates a shop on every call; the bank asks for the same shops again and again.
  const shops = new Map<number, CardShop>()
  return {
    name: `sim-data (seed ${dataset.seed}, ${dataset.shopCount} shops, ${dataset.merchantCount} merchants)`,
    shopCount: () => dataset.shopCount,
    shop(index: number): CardShop {
      const i = index % dataset.shopCount
      const cached = shops.get(i)
      if (cached) return cached
      const s = dataset.shop(i)
      const terminals = s.card.terminalIds
      const shop: CardShop = {
        shopUid: s.uid,
        merchantUid: s.merchantUid,
        // A shop's terminals all take payments; pick one per shop deterministically.
        terminalId: terminals[hashKey('terminal', i) % terminals.length] as string,
        cardAcceptorId: s.card.merchantId,
        acceptorName: s.card.acceptorName,
        acceptorCity: s.card.acceptorCity,
        country: s.card.country,
        mcc: s.card.mcc,
      }
      if (shops.size >= 100_000) shops.clear()
      shops.set(i, shop)
      return shop
    },
    payeeCount: () => dataset.merchantCount,
    payee(index: number): MerchantPayee {
      let merchant = dataset.merchant(index % dataset.merchantCount)
      for (let i = 1; i < PAYEE_SEARCH && !czechAccount(merchant); i++) merchant = dataset.merchant((index + i) % dataset.merchantCount)
      const account = czechAccount(merchant) ?? merchant.bankAccounts[0]
      if (!account) throw new Error(`merchant ${merchant.uid} has no bank account`)
      return {
        merchantUid: merchant.uid,
        name: merchant.name,
        iban: account.iban,
        bic: account.bic,
        currency: account.currency,
        ...(account.scheme === 'certis' ? { bankCode: account.bankCode, number: account.number, ...(account.prefix !== undefined ? { prefix: account.prefix } : {}) } : {}),
      }
    },
  }
}
