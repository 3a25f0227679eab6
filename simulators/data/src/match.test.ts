import { describe, expect, it } from 'vitest'
import { SimDataset } from './dataset.ts'
import { matchCard, matchTransfer } from './match.ts'
import type { TransferScheme } from './match.ts'
import { generateSamples } from './samples.ts'

const data = new SimDataset({ seed: 42, shops: 5_000, merchants: 500 })

describe('matchCard', () => {
  it('matches every card sample to the shop it was built from', () => {
    const samples = generateSamples(data, { count: 300, kind: 'card', outcome: 'found' })
    const rules = new Set<string>()
    for (const sample of samples) {
      const match = matchCard(data, sample.input)
      expect(sample.expected.outcome).toBe('found')
      if (sample.expected.outcome !== 'found') continue
      expect(match, sample.description).toEqual({ shopIndex: sample.expected.shopIndex, rule: sample.expected.rule })
      rules.add(match?.rule ?? '')
    }
    expect(rules).toEqual(new Set(['merchantId+terminalId', 'terminalId', 'merchantId', 'name+city']))
  })

  it('finds nothing for the not-found samples', () => {
    for (const sample of generateSamples(data, { count: 50, kind: 'card', outcome: 'notFound' })) {
      expect(matchCard(data, sample.input)).toBeUndefined()
    }
  })

  it('treats empty identifiers as absent and normalises names', () => {
    const shop = data.shop(data.shopIndexByAcceptorName(data.shop(0).card.acceptorName, data.shop(0).card.acceptorCity) ?? 0)
    expect(matchCard(data, { merchantId: '', terminalId: '  ', description: shop.card.acceptorName.toLowerCase().replace(/ /g, '  '), city: ` ${shop.card.acceptorCity.toLowerCase()} ` })).toEqual({ shopIndex: shop.index, rule: 'name+city' })
    expect(matchCard(data, { merchantId: '', terminalId: '' })).toBeUndefined()
  })

  it('does not pick one shop for an acceptor id shared by a whole chain', () => {
    const chainShop = Array.from({ length: data.shopCount }, (_, i) => data.shop(i)).find((s) => s.card.merchantIdShared)
    expect(chainShop).toBeDefined()
    if (chainShop === undefined) return
    expect(matchCard(data, { merchantId: chainShop.card.merchantId })).toBeUndefined()
    expect(matchCard(data, { merchantId: chainShop.card.merchantId, terminalId: chainShop.card.terminalIds[0] })).toEqual({ shopIndex: chainShop.index, rule: 'merchantId+terminalId' })
  })

  it('prefers the terminal id over a contradicting acceptor id', () => {
    const a = data.shop(10)
    const b = data.shop(4_000)
    expect(matchCard(data, { merchantId: b.card.merchantId, terminalId: a.card.terminalIds[0] })).toEqual({ shopIndex: 10, rule: 'terminalId' })
  })
})

describe('matchTransfer', () => {
  it('matches every transfer sample to the merchant that owns the account', () => {
    const samples = generateSamples(data, { count: 200, kind: 'transfer', outcome: 'found' })
    const operations = new Set<string>()
    for (const sample of samples) {
      if (sample.expected.outcome !== 'found') throw new Error('expected found samples only')
      const scheme = sample.operation.split('/')[1] as TransferScheme
      operations.add(scheme)
      const match = matchTransfer(data, scheme, sample.input)
      expect(match?.merchantIndex, sample.description).toBe(data.merchantIndexOfShop(sample.expected.shopIndex))
    }
    expect(operations).toEqual(new Set(['certis', 'sepa', 'uk']))
  })

  it('finds nothing for an account nobody holds', () => {
    for (const sample of generateSamples(data, { count: 20, kind: 'transfer', outcome: 'notFound' })) {
      expect(matchTransfer(data, 'certis', sample.input)).toBeUndefined()
    }
  })
})

describe('generateSamples', () => {
  it('is deterministic and honours kind and outcome filters', () => {
    expect(generateSamples(data, { count: 30, seed: 7 })).toEqual(generateSamples(data, { count: 30, seed: 7 }))
    expect(generateSamples(data, { count: 30, seed: 8 })).not.toEqual(generateSamples(data, { count: 30, seed: 7 }))
    const invalid = generateSamples(data, { count: 40, outcome: 'invalid' })
    expect(invalid.every((s) => s.expected.outcome === 'invalid')).toBe(true)
    expect(new Set(invalid.map((s) => s.kind))).toEqual(new Set(['card', 'transfer']))
  })
})
