import {
  EnrichmentMethodNotAllowedError,
  EnrichmentNotFoundError,
  EnrichmentNotImplementedError,
} from '@tep/enrichment-client'
import type { ContractDrift } from '@tep/observability'
import { describe, expect, it } from 'vitest'
import type { CardLookupInput } from './lookup-input.ts'
import { Lookups, type LookupsOptions } from './lookups.ts'
import { SystemicLookupError } from './errors.ts'
import { FakeEnrichment } from './test-fakes.ts'

/**
 * The batch POST and the `complete` variants are not in the interface
 * description; a service without them answers 404, 405 or 501. The records
 * then go through the plain lookups (never a pause, never a dead letter), the
 * variant is remembered missing and counted as drift, and tried again later.
 */
const notFound404 = (operation: string, code = 'ROUTE_NOT_FOUND') =>
  new EnrichmentNotFoundError('no such path', { operation, status: 404, apiError: { code, message: 'x' } })

function setUp(options: Partial<LookupsOptions> = {}) {
  const api = new FakeEnrichment()
  const drifts: ContractDrift[] = []
  let clock = 1_000_000
  api.single = async (input) => ({ status: 'found', handle: `h-${input.merchantId}`, shopUid: `s-${input.merchantId}` })
  const lookups = new Lookups({
    client: api,
    mode: 'batch',
    batchMax: 500,
    lingerMs: 0,
    reprobeMs: 60_000,
    now: () => clock,
    onContractDrift: (d) => drifts.push(d),
    ...options,
  })
  return { api, drifts, lookups, advance: (ms: number) => (clock += ms) }
}

const cards = (n: number, from = 0): CardLookupInput[] =>
  Array.from({ length: n }, (_, i) => ({ merchantId: `M${from + i}` }))

async function all(lookups: Lookups, inputs: CardLookupInput[]) {
  const pending = inputs.map((input) => lookups.card(input))
  lookups.flush()
  return Promise.all(pending)
}

describe('a batch POST the service does not have', () => {
  it.each([
    ['404', notFound404('enrichment.findByCardTransactionBatch')],
    ['405', new EnrichmentMethodNotAllowedError('GET only', { operation: 'enrichment.findByCardTransactionBatch', status: 405 })],
    ['501', new EnrichmentNotImplementedError('no batch', { operation: 'enrichment.findByCardTransactionBatch', status: 501 })],
  ])('answered %s: every record of the batch resolves through single lookups, and later records go single at once', async (_s, error) => {
    const { api, drifts, lookups } = setUp()
    api.batch = async () => {
      throw error
    }
    const first = await all(lookups, cards(3))
    expect(first.map((r) => r.kind === 'found' && r.shopUid)).toEqual(['s-M0', 's-M1', 's-M2'])
    expect(first.every((r) => r.operation === 'findByCardTransaction' && r.attempts === 2)).toBe(true)
    const second = await all(lookups, cards(4, 3))
    expect(second.every((r) => r.kind === 'found' && r.attempts === 1)).toBe(true)
    expect(api.count('batch')).toBe(1)
    expect(api.count('single')).toBe(7)
    expect(drifts).toEqual([
      expect.objectContaining({
        api: 'enrichment',
        operation: 'findByCardTransactionBatch',
        field: '/shops/findByCardTransactionBatch',
        kind: 'operation-missing',
      }),
    ])
  })

  it('is tried again by one batch once the re-probe interval has passed, and used again when it answers', async () => {
    const { api, drifts, lookups, advance } = setUp()
    let served = false
    api.batch = async (inputs) => {
      if (!served) throw notFound404('enrichment.findByCardTransactionBatch')
      return inputs.map(() => ({ status: 'notFound', handle: undefined }))
    }
    await all(lookups, cards(2))
    advance(59_000)
    await all(lookups, cards(2))
    expect(api.count('batch')).toBe(1)
    advance(1_000)
    await all(lookups, cards(2))
    expect(api.count('batch')).toBe(2)
    expect(drifts).toHaveLength(2)
    advance(60_000)
    served = true
    const probed = await all(lookups, cards(2))
    expect(probed.every((r) => r.operation === 'findByCardTransactionBatch')).toBe(true)
    await all(lookups, cards(2))
    expect(api.count('batch')).toBe(4)
  })
})

describe('the complete variants', () => {
  it('a complete batch answered 405 gives its records to the plain batch, which the next batches use directly', async () => {
    const { api, drifts, lookups } = setUp({ complete: 'always' })
    api.completeBatch = async () => {
      throw new EnrichmentMethodNotAllowedError('no', { operation: 'enrichment.completeFindByCardTransactionBatch', status: 405 })
    }
    api.batch = async (inputs) => inputs.map((i) => ({ status: 'found', handle: 'h', shopUid: `b-${i.merchantId}` }))
    const first = await all(lookups, cards(2))
    expect(first.map((r) => r.kind === 'found' && r.shopUid)).toEqual(['b-M0', 'b-M1'])
    await all(lookups, cards(2, 2))
    expect(api.count('completeBatch')).toBe(1)
    expect(api.count('batch')).toBe(2)
    expect(drifts.map((d) => d.operation)).toEqual(['completeFindByCardTransactionBatch'])
  })

  it('a complete single lookup answered 501 is redone by the plain one, never REJECTED', async () => {
    const { api, drifts, lookups } = setUp({ mode: 'single', complete: 'always' })
    api.completeSingle = async () => {
      throw new EnrichmentNotImplementedError('no', { operation: 'enrichment.completeFindByCardTransaction', status: 501 })
    }
    const results = [...(await all(lookups, cards(1))), ...(await all(lookups, cards(2, 1)))]
    expect(results.every((r) => r.kind === 'found' && r.operation === 'findByCardTransaction')).toBe(true)
    expect(api.count('completeSingle')).toBe(1)
    expect(drifts.map((d) => d.kind)).toEqual(['operation-missing'])
  })

  it('a complete 404 that the plain lookup confirms as "no shop" is an answer, not a missing operation', async () => {
    const { api, drifts, lookups } = setUp({ mode: 'single', complete: 'always' })
    api.completeSingle = async () => {
      throw notFound404('enrichment.completeFindByCardTransaction', 'SHOP_NOT_FOUND')
    }
    api.single = async () => ({ status: 'notFound', handle: 'h' })
    const [result] = await all(lookups, cards(1))
    expect(result).toMatchObject({ kind: 'notFound', handle: 'h' })
    await all(lookups, cards(1, 1))
    expect(api.count('completeSingle')).toBe(2)
    expect(drifts).toEqual([])
  })

  it('a complete 404 for a record the plain lookup finds says the variant is missing', async () => {
    const { api, drifts, lookups } = setUp({ mode: 'single', complete: 'always' })
    api.completeSingle = async () => {
      throw notFound404('enrichment.completeFindByCardTransaction', 'NOT_FOUND')
    }
    await all(lookups, cards(1))
    await all(lookups, cards(2, 1))
    expect(api.count('completeSingle')).toBe(1)
    expect(drifts.map((d) => d.operation)).toEqual(['completeFindByCardTransaction'])
  })
})

describe('the plain single lookup keeps its meaning', () => {
  it('a 404 saying its path does not exist is still systemic (a wrong base URL pauses, it is not "no shop")', async () => {
    const { api, lookups } = setUp({ mode: 'single' })
    api.single = async () => {
      throw notFound404('enrichment.findByCardTransaction')
    }
    await expect(lookups.card({ merchantId: 'M' })).rejects.toBeInstanceOf(SystemicLookupError)
  })
})
