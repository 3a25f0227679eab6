import { describe, expect, it } from 'vitest'
import { SimDataset, generateSamples } from '@tep/sim-data'
import type { TransferScheme } from '@tep/sim-data'
import { Mutator } from './mutations.ts'
import { SimClock } from './sim-clock.ts'
import { World } from './world.ts'

const data = new SimDataset({ seed: 'world', shops: 4_000, merchants: 400 })

function freshWorld(): { world: World; mutator: Mutator; clock: SimClock } {
  const clock = new SimClock()
  const world = new World(data, clock)
  return { world, mutator: new Mutator(world), clock }
}

describe('World lookups', () => {
  it('resolves every found sample to its shop, and the same input always to the same handle', () => {
    const { world } = freshWorld()
    for (const sample of generateSamples(data, { count: 200, outcome: 'found' })) {
      if (sample.expected.outcome !== 'found') throw new Error('found samples only')
      const resolve = () => (sample.kind === 'card' ? world.resolveCard(sample.input) : world.resolveTransfer(sample.operation.split('/')[1] as TransferScheme, sample.input))
      const first = resolve()
      expect(first.shopIndex, sample.description).toBe(sample.expected.shopIndex)
      expect(resolve().handle).toBe(first.handle)
      expect(first.handle).not.toBe(data.shop(sample.expected.shopIndex).uid)
    }
  })

  it('gives a not-found input a handle too, and ignores amounts and dates when deriving it', () => {
    const { world } = freshWorld()
    const shop = data.shop(5)
    const a = world.resolveCard({ terminalId: shop.card.terminalIds[0], amount: '1.00', dateTime: '2026-01-01' })
    const b = world.resolveCard({ terminalId: shop.card.terminalIds[0], amount: '99.00' })
    expect(a.handle).toBe(b.handle)
    const missing = world.resolveCard({ terminalId: 'ZZ123456' })
    expect(missing.shopIndex).toBeUndefined()
    expect(missing.handle).toMatch(/^[0-9A-Za-z]{22}$/)
    expect(world.resolveShopId(missing.handle)).toBeUndefined()
    expect(world.resolveShopId(a.handle)).toBe(5)
  })
})

describe('Mutator', () => {
  it('announces a shop update and the shop data changes', () => {
    const { world, mutator } = freshWorld()
    const before = world.shopJson(7)
    const items = mutator.apply({ kind: 'shopUpdate', shopUid: before.uid })
    expect(items).toEqual([{ id: 1, level: 'shop', type: 'update', key: before.uid, at: expect.any(Number) }])
    expect(world.shopJson(7)).not.toEqual(before)
    expect(world.shopJson(7).tags.length).toBe(before.tags.length + 1)
  })

  it('rebrands a merchant (name and logo) with one merchant-level item', () => {
    const { world, mutator } = freshWorld()
    const merchant = data.merchant(3)
    const items = mutator.apply({ kind: 'rebrand', merchantUid: merchant.uid, name: 'Nová Značka' })
    expect(items.map((i) => [i.level, i.type, i.key])).toEqual([['merchant', 'update', merchant.uid]])
    expect(world.merchantJson(3).name).toBe('Nová Značka')
    expect(world.merchantJson(3).logo).not.toBe(merchant.logo)
  })

  it('remaps a handle: later lookups with the same input answer the new shop', () => {
    const { world, mutator } = freshWorld()
    const input = { terminalId: data.shop(1).card.terminalIds[0] }
    const { handle } = world.resolveCard(input)
    const target = data.shop(2_000)
    const items = mutator.apply({ kind: 'remap', handle, toShopUid: target.uid })
    expect(items.map((i) => [i.level, i.type, i.key])).toEqual([['handle', 'remap', handle]])
    expect(world.resolveCard(input)).toEqual({ handle, shopIndex: 2_000 })
    expect(world.resolveShopId(handle)).toBe(2_000)
  })

  it('deletes a merchant with all its shops: one item per shop and one for the merchant, then not found', () => {
    const { world, mutator } = freshWorld()
    const merchant = Array.from({ length: data.merchantCount }, (_, m) => data.merchant(m)).find((m) => m.shopCount >= 3 && m.shopCount <= 20)
    if (merchant === undefined) throw new Error('test data has no small chain')
    const items = mutator.apply({ kind: 'deleteMerchant', merchantUid: merchant.uid })
    expect(items).toHaveLength(merchant.shopCount + 1)
    expect(items.slice(0, -1).every((i) => i.level === 'shop' && i.type === 'delete')).toBe(true)
    expect(items.at(-1)).toMatchObject({ level: 'merchant', type: 'delete', key: merchant.uid })
    expect(world.resolveMerchantUid(merchant.uid)).toBeUndefined()
    const shop = data.shop(merchant.firstShop)
    expect(world.resolveShopId(shop.uid)).toBeUndefined()
    expect(world.resolveCard({ terminalId: shop.card.terminalIds[0] }).shopIndex).toBeUndefined()
  })

  it('attributes transfers to the next live shop when the main shop is deleted', () => {
    const { world, mutator } = freshWorld()
    const merchant = Array.from({ length: data.merchantCount }, (_, m) => data.merchant(m)).find((m) => m.shopCount >= 2 && m.bankAccounts[0]?.scheme === 'certis')
    if (merchant === undefined) throw new Error('test data has no Czech chain')
    const account = merchant.bankAccounts[0]
    if (account?.scheme !== 'certis') throw new Error('unreachable')
    const input = { accountNumber: account.number, bankCode: account.bankCode, ...(account.prefix === undefined ? {} : { accountPrefix: account.prefix }) }
    expect(world.resolveTransfer('certis', input).shopIndex).toBe(merchant.firstShop)
    mutator.apply({ kind: 'deleteShop', shopUid: data.shop(merchant.firstShop).uid })
    expect(world.resolveTransfer('certis', input).shopIndex).toBe(merchant.firstShop + 1)
  })

  it('makes the same random changes for the same seed and call sequence, with consecutive ids', () => {
    const a = freshWorld()
    const b = freshWorld()
    const itemsA = a.mutator.apply({ kind: 'random', count: 30 })
    const itemsB = b.mutator.apply({ kind: 'random', count: 30 })
    expect(itemsA.map((i) => [i.id, i.level, i.type, i.key])).toEqual(itemsB.map((i) => [i.id, i.level, i.type, i.key]))
    expect(itemsA.map((i) => i.id)).toEqual(itemsA.map((_, i) => i + 1))
  })

  it('refuses to change what does not exist', () => {
    const { mutator } = freshWorld()
    expect(() => mutator.apply({ kind: 'shopUpdate', shopUid: 'nope' })).toThrow(/shop "nope" does not exist/)
    expect(() => mutator.apply({ kind: 'remap', handle: 'never-issued' })).toThrow(/handle "never-issued" does not exist/)
  })
})
