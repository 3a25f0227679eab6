import { describe, expect, it } from 'vitest'
import { isValidCzechAccountPart, isValidIban } from './bank-numbers.ts'
import { SimDataset } from './dataset.ts'
import { CATEGORIES } from './catalog/categories.ts'

const small = new SimDataset({ seed: 'unit', shops: 3_000, merchants: 300 })

describe('SimDataset', () => {
  it('produces the same data for the same seed, and different data for another seed', () => {
    const again = new SimDataset({ seed: 'unit', shops: 3_000, merchants: 300 })
    const other = new SimDataset({ seed: 'other', shops: 3_000, merchants: 300 })
    for (const i of [0, 1, 777, 2_999]) {
      expect(again.shop(i)).toEqual(small.shop(i))
    }
    for (const m of [0, 150, 299]) expect(again.merchant(m)).toEqual(small.merchant(m))
    expect(other.shop(777).uid).not.toBe(small.shop(777).uid)
    expect(other.merchant(5).name === small.merchant(5).name && other.merchant(5).uid === small.merchant(5).uid).toBe(false)
  })

  it('has the requested sizes, every merchant owns at least one shop and the ranges tile the shops', () => {
    expect(small.shopCount).toBe(3_000)
    expect(small.merchantCount).toBe(300)
    let next = 0
    for (let m = 0; m < small.merchantCount; m++) {
      const merchant = small.merchant(m)
      expect(merchant.firstShop).toBe(next)
      expect(merchant.shopCount).toBeGreaterThanOrEqual(1)
      next += merchant.shopCount
    }
    expect(next).toBe(3_000)
    expect(small.merchant(0).shopCount).toBeGreaterThan(small.merchant(299).shopCount)
  })

  it('defaults to 50,000 shops of 5,000 merchants', () => {
    const defaults = new SimDataset()
    expect([defaults.shopCount, defaults.merchantCount]).toEqual([50_000, 5_000])
  })

  it('gives unique shop uids, merchant uids and terminal ids, and each resolves back to its owner', () => {
    const shopUids = new Set<string>()
    const terminals = new Set<string>()
    for (let i = 0; i < small.shopCount; i++) {
      const shop = small.shop(i)
      shopUids.add(shop.uid)
      expect(small.shopIndexByUid(shop.uid)).toBe(i)
      expect(shop.merchantIndex).toBe(small.merchantIndexOfShop(i))
      for (const t of shop.card.terminalIds) {
        terminals.add(t)
        expect(small.shopIndexByTerminalId(t.toLowerCase())).toBe(i)
      }
    }
    expect(shopUids.size).toBe(small.shopCount)
    const merchantUids = new Set<string>()
    for (let m = 0; m < small.merchantCount; m++) {
      const uid = small.merchant(m).uid
      merchantUids.add(uid)
      expect(small.merchantIndexByUid(uid)).toBe(m)
    }
    expect(merchantUids.size).toBe(small.merchantCount)
    const terminalCount = Array.from({ length: small.shopCount }, (_, i) => small.shop(i).card.terminalIds.length).reduce((a, b) => a + b, 0)
    expect(terminals.size).toBe(terminalCount)
  })

  it('rejects identifiers it never issued', () => {
    const uid = small.shop(10).uid
    expect(small.shopIndexByUid(uid.slice(0, 21) + (uid.endsWith('A') ? 'B' : 'A'))).toBeUndefined()
    expect(small.shopIndexByUid('short')).toBeUndefined()
    expect(small.merchantIndexByUid(small.shop(10).uid)).toBeUndefined()
    expect(small.shopIndexByTerminalId('ZZ000000')).toBeUndefined()
    expect(small.resolveMerchantId('999000000000000')).toBeUndefined()
  })

  it('generates shops with the documented shape: 25 categories, plausible addresses, online shops without coordinates', () => {
    const categories = new Set<string>()
    let online = 0
    for (let i = 0; i < small.shopCount; i++) {
      const shop = small.shop(i)
      categories.add(shop.category.name)
      expect(shop.address.country).toMatch(/^[A-Z]{2}$/)
      expect(shop.card.mcc).toMatch(/^[0-9]{4}$/)
      expect(shop.card.merchantId).toMatch(/^[0-9]{15}$/)
      expect(shop.card.acceptorName.length).toBeLessThanOrEqual(25)
      expect(shop.card.acceptorCity.length).toBeLessThanOrEqual(13)
      if (shop.type === 'online') {
        online++
        expect(shop.coordinates).toBeUndefined()
        expect(shop.googlePlaceId).toBeUndefined()
      } else {
        expect(Math.abs((shop.coordinates?.lat ?? 0) - 0)).toBeGreaterThan(40)
        expect(shop.googlePlaceId).toMatch(/^ChIJ[\w-]{23}$/)
      }
    }
    expect(online).toBeGreaterThan(0)
    expect(CATEGORIES).toHaveLength(25)
    expect(categories.size).toBeGreaterThan(15)
  })

  it('gives merchants bank accounts that pass the national and IBAN checks', () => {
    for (let m = 0; m < small.merchantCount; m++) {
      for (const account of small.merchant(m).bankAccounts) {
        expect(isValidIban(account.iban), account.iban).toBe(true)
        if (account.scheme === 'certis') {
          expect(isValidCzechAccountPart(account.number), account.number).toBe(true)
          if (account.prefix !== undefined) expect(isValidCzechAccountPart(account.prefix)).toBe(true)
        }
      }
    }
  })

  it('refuses impossible sizes with a clear message', () => {
    expect(() => new SimDataset({ shops: 10, merchants: 11 })).toThrow(/merchants must be an integer from 1 to min\(shops/)
    expect(() => new SimDataset({ shops: 0 })).toThrow(/shops must be an integer/)
  })

  it('scales: a data set of 200,000 shops builds and answers lookups', () => {
    const big = new SimDataset({ seed: 3, shops: 200_000, merchants: 20_000 })
    const shop = big.shop(199_999)
    expect(big.shopIndexByUid(shop.uid)).toBe(199_999)
    expect(big.shopIndexByTerminalId(shop.card.terminalIds[0] as string)).toBe(199_999)
  })
})
