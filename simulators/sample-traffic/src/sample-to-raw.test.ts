import { SimDataset, generateSamples, type Sample } from '@tep/sim-data'
import { rawTransactionProblems } from '@tep/schemas'
import { describe, expect, it } from 'vitest'
import { generateRawEvents } from './raw-events.ts'
import { sampleToRaw } from './sample-to-raw.ts'

const dataset = new SimDataset({ shops: 2_000, merchants: 200 })

describe('sampleToRaw', () => {
  it('keeps absent and empty apart: absent keys become null, empty strings stay empty', () => {
    const sample: Sample = {
      kind: 'card',
      operation: 'findByCardTransaction',
      description: 'test',
      input: { merchantId: 'M1', terminalId: '', amount: '12.50', currency: 'CZK' },
      expected: { outcome: 'notFound' },
    }
    const built = sampleToRaw(sample, { transactionId: 't1', now: 1 })
    expect(built?.raw.card).toMatchObject({ merchantId: 'M1', terminalId: '', city: null, mcc: null })
    expect(built?.raw.amount).toBe('12.50')
    expect(built?.expected).toBe('NOT_FOUND')
  })

  it('maps each transfer scheme to its RawTransaction scheme and the reference to message', () => {
    const uk: Sample = {
      kind: 'transfer',
      operation: 'findByBankTransfer/uk',
      description: 'uk',
      input: { sortCode: '123456', accountNumber: '12345678', reference: 'INV 1' },
      expected: { outcome: 'notFound' },
    }
    expect(sampleToRaw(uk, { transactionId: 't' })?.raw.transfer).toMatchObject({ scheme: 'UK', counterpartySortCode: '123456', message: 'INV 1' })
  })

  it('reports a raw event that breaks RawTransaction rules as DLQ, and skips faults ingest normalises away', () => {
    const base = { kind: 'card' as const, operation: 'findByCardTransaction' as const, description: 'x' }
    const badBin = sampleToRaw({ ...base, input: { terminalId: 'T1', cardBin: '4111' }, expected: { outcome: 'invalid', code: 'INVALID_PARAMETER', parameter: 'cardBin' } }, { transactionId: 't' })
    expect(badBin?.expected).toBe('DLQ')
    const badAmount = sampleToRaw({ ...base, input: { terminalId: 'T1', amount: '12,50' }, expected: { outcome: 'invalid', code: 'INVALID_PARAMETER', parameter: 'amount' } }, { transactionId: 't' })
    expect(badAmount).toBeUndefined()
  })

  it('turns every generated sample into a valid raw event or an expected DLQ', () => {
    for (const sample of generateSamples(dataset, { count: 300, seed: 3 })) {
      const built = sampleToRaw(sample, { transactionId: 'x' })
      if (!built) continue
      expect(rawTransactionProblems(built.raw).length === 0).toBe(built.expected !== 'DLQ')
      if (built.expected === 'MATCHED') expect(built.expectedShopUid).toBe(sample.expected.outcome === 'found' ? sample.expected.shopUid : undefined)
    }
  })
})

describe('generateRawEvents', () => {
  it('returns exactly count events with unique ids and a realistic mix', () => {
    const events = generateRawEvents(dataset, { count: 500, seed: 1, idPrefix: 'run1', now: 1_700_000_000_000 })
    expect(events).toHaveLength(500)
    expect(new Set(events.map((e) => e.raw.transactionId)).size).toBe(500)
    const outcomes = new Set(events.map((e) => e.expected))
    expect(outcomes).toContain('MATCHED')
    expect(outcomes).toContain('NOT_FOUND')
    expect(outcomes).toContain('REJECTED')
    expect(generateRawEvents(dataset, { count: 50, seed: 1, idPrefix: 'run1', now: 1_700_000_000_000 }).map((e) => e.raw)).toEqual(events.slice(0, 50).map((e) => e.raw))
  })
})
