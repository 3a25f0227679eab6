import { describe, expect, it } from 'vitest'
import {
  exampleRawBankTransfer,
  exampleRawCardTransaction,
  type CardTransaction,
  type RawTransaction,
} from '@tep/schemas'
import { EnrichmentBadRequestError } from '@tep/enrichment-client'
import { Enricher, validateRaw } from './enricher.ts'
import { RawRecordError } from './errors.ts'
import { Lookups } from './lookups.ts'
import { MerchantDetails } from './merchant-details.ts'
import { createMerchantTables } from './snapshot-table.ts'
import { FakeEnrichment } from './test-fakes.ts'

function codeOf(fn: () => void): string | undefined {
  try {
    fn()
    return undefined
  } catch (err) {
    expect(err).toBeInstanceOf(RawRecordError)
    expect((err as RawRecordError).retriable).toBe(false)
    return (err as RawRecordError).code
  }
}

describe('validateRaw', () => {
  it('accepts a card transaction and a transfer', () => {
    expect(codeOf(() => validateRaw(exampleRawCardTransaction()))).toBeUndefined()
    expect(codeOf(() => validateRaw(exampleRawBankTransfer()))).toBeUndefined()
  })

  it('rejects both or neither of card and transfer with their own codes', () => {
    const card = exampleRawCardTransaction()
    const transfer = exampleRawBankTransfer()
    expect(codeOf(() => validateRaw({ ...card, transfer: transfer.transfer }))).toBe('RAW_CARD_AND_TRANSFER')
    expect(codeOf(() => validateRaw({ ...card, card: null }))).toBe('RAW_NO_CARD_OR_TRANSFER')
  })

  it('rejects a card number longer than a BIN without echoing it', () => {
    const raw = exampleRawCardTransaction()
    const pan = '4111111111111111'
    try {
      validateRaw({ ...raw, card: { ...(raw.card as CardTransaction), cardBin: pan } })
      expect.fail('a PAN in cardBin must be refused')
    } catch (err) {
      expect((err as RawRecordError).code).toBe('RAW_INVALID_FIELD')
      expect((err as Error).message).not.toContain(pan)
    }
    expect(codeOf(() => validateRaw({ ...raw, amount: '-1' }))).toBe('RAW_INVALID_FIELD')
  })

  it('rejects oversized fields, absurd amounts, unknown currencies and out-of-range times', () => {
    const card = exampleRawCardTransaction()
    const transfer = exampleRawBankTransfer()
    const long = 'x'.repeat(20_000)
    for (const raw of [
      { ...card, card: { ...(card.card as CardTransaction), description: long } },
      { ...transfer, transfer: { ...transfer.transfer!, message: long } },
      { ...card, amount: '9'.repeat(400) },
      { ...card, currency: 'ZZZ' },
      { ...card, occurredAt: 8.64e15 + 1 },
      { ...card, occurredAt: -1 },
    ] satisfies RawTransaction[]) {
      expect(codeOf(() => validateRaw(raw)), JSON.stringify(raw).slice(0, 80)).toBe('RAW_INVALID_FIELD')
    }
  })
})

describe('Enricher', () => {
  it('turns anything thrown while building the request into a record error (DLQ), not an outage', async () => {
    const api = new FakeEnrichment()
    const enricher = build(api)
    // validateRaw would refuse it first; the enricher must not depend on that.
    const raw = { ...exampleRawCardTransaction(), occurredAt: 8.64e15 + 1 }
    await expect(enricher.enrich(raw)).rejects.toMatchObject({
      code: 'RAW_UNPREPARABLE',
      retriable: false,
    })
    expect(api.calls).toEqual([])
  })

  function build(api: FakeEnrichment) {
    const tables = createMerchantTables({ invalidationsEnabled: true })
    const lookups = new Lookups({ client: api, mode: 'single', batchMax: 500, lingerMs: 1 })
    const details = new MerchantDetails({ tables, client: api, instanceId: 'i' })
    return new Enricher({ lookups, details, now: () => 42 })
  }

  it('MATCHED carries handle, shop and merchant uids and snapshots', async () => {
    const api = new FakeEnrichment()
    api.single = async () => ({ status: 'found', handle: 'h1', shopUid: 's1' })
    api.shop = async (uid) => ({ uid, merchantUid: 'm1@cz' })
    api.merchant = async (uid) => ({ uid, name: 'ACME' })
    const raw: RawTransaction = exampleRawCardTransaction()
    const { enriched, fetched } = await build(api).enrich(raw)
    expect(enriched).toMatchObject({
      transactionId: raw.transactionId,
      raw,
      status: 'MATCHED',
      rejectReason: null,
      handle: 'h1',
      shopUid: 's1',
      merchantUid: 'm1@cz',
      shop: { uid: 's1' },
      merchant: { uid: 'm1@cz', name: 'ACME' },
      enrichedAt: 42,
      lookup: { operation: 'findByCardTransaction', attempts: 1, shopSource: 'API', merchantSource: 'API' },
    })
    expect(fetched).toHaveLength(2)
  })

  it('NOT_FOUND keeps the handle; REJECTED carries the reason and no handle', async () => {
    const api = new FakeEnrichment()
    api.transfer = async () => ({ status: 'notFound', handle: 'h-nf' })
    const enricher = build(api)
    const nf = await enricher.enrich(exampleRawBankTransfer())
    expect(nf.enriched).toMatchObject({
      status: 'NOT_FOUND',
      handle: 'h-nf',
      shopUid: null,
      shop: null,
      rejectReason: null,
    })
    // A SWIFT transfer is looked up too; the API's 400 for it is a per-record rejection.
    api.transfer = async (scheme) => {
      throw new EnrichmentBadRequestError('iban is required', {
        operation: `findByBankTransfer.${scheme}`,
        status: 400,
        apiError: { code: 'MISSING_PARAMETER', message: 'iban is required', parameter: 'iban' },
      })
    }
    const raw = exampleRawBankTransfer()
    const swift = { ...raw.transfer!, scheme: 'SWIFT', counterpartyIban: null, counterpartyBankCode: null }
    const rejected = await enricher.enrich({ ...raw, transfer: swift })
    expect(api.calls.at(-1)?.op).toBe('transfer/sepa')
    expect(rejected.enriched).toMatchObject({
      status: 'REJECTED',
      handle: null,
      rejectReason: { code: 'MISSING_PARAMETER', httpStatus: 400 },
    })
  })
})
