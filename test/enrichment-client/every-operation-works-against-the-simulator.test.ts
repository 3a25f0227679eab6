import {
  EnrichmentBadRequestError,
  type EnrichmentClient,
  type InvalidationPage,
  type TransferScheme,
} from '@tep/enrichment-client'
import type { EnrichmentSim } from '@tep/enrichment-sim'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BASIC,
  admin,
  cardInput,
  newClient,
  oneSample,
  rejection,
  samples,
  startSim,
  type SampleFound,
  type SimSample,
} from './sim-harness.ts'

let sim: EnrichmentSim
let client: EnrichmentClient

beforeAll(async () => {
  sim = await startSim()
  client = newClient(sim)
})

afterAll(async () => {
  await client?.close()
  await sim?.close()
})

function expectMatches(
  result: { status: string; handle?: string | undefined; shopUid?: string },
  sample: SimSample,
): void {
  const expected = sample.expected
  if (expected.outcome === 'found') {
    expect(result).toMatchObject({ status: 'found', handle: expected.handle, shopUid: expected.shopUid })
  } else {
    expect(result.status).toBe('notFound')
    expect(typeof result.handle).toBe('string')
  }
}

describe('card lookups', () => {
  it('findByCardTransaction finds the shop of each found sample and reports not-found ones', async () => {
    const cases = [
      ...(await samples(sim, { count: 12, kind: 'card', outcome: 'found' })),
      ...(await samples(sim, { count: 4, kind: 'card', outcome: 'notFound' })),
    ]
    for (const sample of cases) expectMatches(await client.findByCardTransaction(cardInput(sample)), sample)
  })

  it('findByCardTransaction rejects an invalid sample with the API error code and parameter', async () => {
    for (const sample of await samples(sim, { count: 4, kind: 'card', outcome: 'invalid' })) {
      const err = await rejection(client.findByCardTransaction(cardInput(sample)))
      const expected = sample.expected as { code: string; parameter?: string }
      expect(err).toBeInstanceOf(EnrichmentBadRequestError)
      expect((err as EnrichmentBadRequestError).apiError).toMatchObject({
        code: expected.code,
        ...(expected.parameter ? { parameter: expected.parameter } : {}),
      })
    }
  })

  it('completeFindByCardTransaction returns the full shop and its merchant', async () => {
    for (const sample of await samples(sim, { count: 5, kind: 'card', outcome: 'found', seed: 2 })) {
      const expected = sample.expected as SampleFound
      const result = await client.completeFindByCardTransaction(cardInput(sample))
      if (result.status !== 'found') throw new Error(`expected found for ${JSON.stringify(sample.input)}`)
      expect(result.shopUid).toBe(expected.shopUid)
      expect(result.shop).toMatchObject({ uid: expected.shopUid, merchantUid: expected.merchantUid })
      expect(result.merchant?.uid).toBe(expected.merchantUid)
      expect(typeof result.merchant?.name).toBe('string')
    }
  })

  it('findByCardTransactionBatch answers every entry in request order, invalid entries included', async () => {
    const batch = await samples(sim, { count: 60, kind: 'card', seed: 3 })
    expect(new Set(batch.map((s) => s.expected.outcome))).toEqual(new Set(['found', 'notFound', 'invalid']))
    const results = await client.findByCardTransactionBatch(batch.map(cardInput))
    expect(results).toHaveLength(batch.length)
    results.forEach((result, i) => {
      const sample = batch[i]!
      if (sample.expected.outcome === 'invalid') {
        expect(result).toMatchObject({ status: 'invalid', error: { code: sample.expected.code } })
      } else expectMatches(result as { status: string; handle?: string }, sample)
    })
  })

  it('completeFindByCardTransactionBatch carries shop and merchant per found entry, 500 entries at once', async () => {
    const batch = await samples(sim, { count: 500, kind: 'card', seed: 4 })
    const results = await client.completeFindByCardTransactionBatch(batch.map(cardInput))
    expect(results).toHaveLength(500)
    results.forEach((result, i) => {
      const expected = batch[i]!.expected
      expect(result.status).toBe(expected.outcome)
      if (result.status === 'found' && expected.outcome === 'found') {
        expect(result.shop.uid).toBe(expected.shopUid)
        expect(result.merchant?.uid).toBe(expected.merchantUid)
      }
    })
  })
})

describe('bank-transfer lookups', () => {
  it('findByBankTransfer resolves certis, sepa and uk samples', async () => {
    const transfers = await samples(sim, { count: 40, kind: 'transfer', seed: 5 })
    const schemes = new Set<string>()
    for (const sample of transfers) {
      const scheme = sample.operation.split('/')[1] as TransferScheme
      schemes.add(scheme)
      if (sample.expected.outcome === 'invalid') {
        const err = await rejection(client.findByBankTransfer(scheme, sample.input))
        expect(err).toBeInstanceOf(EnrichmentBadRequestError)
        expect((err as EnrichmentBadRequestError).apiError?.code).toBe(sample.expected.code)
      } else {
        expectMatches(await client.findByBankTransfer(scheme, sample.input), sample)
      }
    }
    expect(schemes).toEqual(new Set(['certis', 'sepa', 'uk']))
  })
})

describe('shops and merchants', () => {
  it('getShop by uid and by handle, getMerchant by uid', async () => {
    const [sample] = await samples(sim, { count: 1, kind: 'card', outcome: 'found', seed: 6 })
    const expected = sample!.expected as SampleFound
    const byUid = await client.getShop(expected.shopUid)
    expect(byUid).toMatchObject({ uid: expected.shopUid, merchantUid: expected.merchantUid })
    // A handle exists once a lookup has issued it.
    const found = await client.findByCardTransaction(cardInput(sample!))
    expect(found.handle).toBe(expected.handle)
    expect(await client.getShop(found.handle!)).toEqual(byUid)
    const merchant = await client.getMerchant(expected.merchantUid)
    expect(merchant.uid).toBe(expected.merchantUid)
    expect(merchant.name).toEqual(expect.any(String))
  })

  it('works with HTTP Basic credentials too', async () => {
    const basic = newClient(sim, { credentials: BASIC })
    try {
      const [sample] = await samples(sim, { count: 1, kind: 'card', outcome: 'found', seed: 7 })
      const result = await basic.findByCardTransaction(cardInput(sample!))
      expect(result).toMatchObject({ status: 'found', shopUid: (sample!.expected as SampleFound).shopUid })
    } finally {
      await basic.close()
    }
  })
})

describe('observability hooks', () => {
  it('report each attempt with the operation name, status and duration, the token request included', async () => {
    const seen: Array<{ operation: string; status: number | undefined; durationMs: number }> = []
    const observed = newClient(sim, {
      hooks: {
        onResponse: (i) => seen.push({ operation: i.operation, status: i.status, durationMs: i.durationMs }),
      },
    })
    try {
      const sample = await oneSample(sim, { count: 1, kind: 'card', outcome: 'found', seed: 8 })
      await observed.findByCardTransaction(cardInput(sample))
      await observed.getShop((sample.expected as SampleFound).shopUid)
    } finally {
      await observed.close()
    }
    expect(seen.map((s) => [s.operation, s.status])).toEqual([
      ['enrichment.token', 200],
      ['enrichment.findByCardTransaction', 200],
      ['enrichment.getShop', 200],
    ])
    expect(seen.every((s) => s.durationMs >= 0)).toBe(true)
  })
})

describe('invalidations', () => {
  it('item/range gives the cursor before changes made after a moment, and the feed pages through them to the end', async () => {
    const before = new Date((await admin<{ now: string }>(sim, 'GET', '/__admin/clock')).now)
    const { items } = await admin<{ items: Array<{ id: number; level: string; key: string }> }>(
      sim,
      'POST',
      '/__admin/mutations',
      { kind: 'random', count: 15 },
    )
    expect(items.length).toBeGreaterThanOrEqual(15)

    const range = await client.getInvalidationItemRange({ from: before })
    expect(range.fromId).toBe(items[0]!.id - 1)
    expect(range.toId).toBe(items.at(-1)!.id)

    const pages: InvalidationPage[] = []
    for await (const page of client.iterateInvalidations({ fromId: range.fromId, pageSize: 4 }))
      pages.push(page)
    expect(pages.length).toBeGreaterThan(1)
    const seen = pages.flatMap((p) =>
      p.batches.flatMap((b) => b.ids.map((id, i) => ({ id, level: b.level, key: b.keys?.[i] }))),
    )
    expect(seen).toEqual(items.map((i) => ({ id: i.id, level: i.level, key: i.key })))
    expect(pages.at(-1)!.paging.hasMore).toBe(false)
  })

  it('filters by level and stops at toId (inclusive)', async () => {
    const { items } = await admin<{ items: Array<{ id: number; level: string }> }>(
      sim,
      'POST',
      '/__admin/mutations',
      { kind: 'random', count: 20 },
    )
    const fromId = items[0]!.id - 1
    const toId = items[Math.floor(items.length / 2)]!.id
    const shopIds: number[] = []
    for await (const page of client.iterateInvalidations({ fromId, toId, level: ['shop'], pageSize: 2 })) {
      for (const batch of page.batches) {
        expect(batch.level).toBe('shop')
        shopIds.push(...batch.ids)
      }
    }
    expect(shopIds).toEqual(items.filter((i) => i.level === 'shop' && i.id <= toId).map((i) => i.id))
  })
})

describe('suggestions', () => {
  it('postSuggestion is accepted and stored as sent', async () => {
    const suggestion = {
      current: { shopUid: 'shop-1', merchantUid: 'm-1@cz' },
      suggestion: 'Wrong logo: the shop rebranded to "Kavárna Ďáblice"',
      source: 'user' as const,
    }
    const receipt = await client.postSuggestion(suggestion)
    expect(receipt.id).toEqual(expect.any(String))
    const stored = await admin<{ suggestions: Array<{ id: string; body: unknown }> }>(
      sim,
      'GET',
      '/__admin/suggestions',
    )
    expect(stored.suggestions.find((s) => s.id === receipt.id)?.body).toEqual(suggestion)
  })
})
