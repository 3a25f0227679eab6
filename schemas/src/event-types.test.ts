import type avro from 'avsc'
import { describe, expect, it } from 'vitest'
import type { EventTypes } from './event-types.ts'
import * as examples from './example-events.ts'
import { avroSchemas, SCHEMA_NAMES, type SchemaName } from './index.ts'
import { rawTransactionProblems } from './raw-transaction-rules.ts'
import { keySubject, valueSubject } from './subjects.ts'

/**
 * Paths where a value's own keys differ from the record fields of the schema.
 * avsc's isValid fills absent fields from their defaults, so a field the
 * interface forgot would pass it; comparing key sets does not.
 */
function keyDrift(type: avro.Type, value: unknown, path = '$'): string[] {
  if (value === null || value === undefined) return []
  const t = type as unknown as {
    typeName: string
    fields?: { name: string; type: avro.Type }[]
    types?: avro.Type[]
    itemsType?: avro.Type
    valuesType?: avro.Type
  }
  if (t.typeName === 'record') {
    const declared = t.fields!.map((f) => f.name).sort()
    const actual = Object.keys(value as object).sort()
    const drift = [
      ...declared.filter((k) => !actual.includes(k)).map((k) => `${path}.${k} missing`),
      ...actual.filter((k) => !declared.includes(k)).map((k) => `${path}.${k} undeclared`),
    ]
    for (const f of t.fields!)
      drift.push(...keyDrift(f.type, (value as Record<string, unknown>)[f.name], `${path}.${f.name}`))
    return drift
  }
  if (t.typeName === 'union:unwrapped') {
    const branch = t.types!.find((b) => b.typeName !== 'null' && b.isValid(value))
    return branch === undefined ? [] : keyDrift(branch, value, path)
  }
  if (t.typeName === 'array')
    return (value as unknown[]).flatMap((v, i) => keyDrift(t.itemsType!, v, `${path}[${i}]`))
  if (t.typeName === 'map')
    return Object.entries(value as object).flatMap(([k, v]) => keyDrift(t.valuesType!, v, `${path}.${k}`))
  return []
}

// Typed by the hand-written interfaces: a field missing from an interface makes the
// example lack it (isValid fails); a field missing from a schema is an undeclared
// field (isValid with noUndeclaredFields fails). Either drift fails here.
const samples: { [K in SchemaName]: EventTypes[K][] } = {
  RawTransaction: [examples.exampleRawCardTransaction(), examples.exampleRawBankTransfer()],
  EnrichedTransaction: [examples.exampleEnrichedTransaction()],
  Shop: [examples.exampleShop()],
  Merchant: [examples.exampleMerchant()],
  Invalidation: [examples.exampleInvalidation()],
  InvalidationCursor: [examples.exampleInvalidationCursor()],
  MerchantDataFetched: [examples.exampleMerchantDataFetched()],
  Consent: [examples.exampleConsent()],
  BankTransaction: [examples.exampleBankTransaction()],
}

describe('TypeScript event types match the Avro schemas', () => {
  it.each(SCHEMA_NAMES)('%s examples are valid and round-trip unchanged', (name) => {
    const { type } = avroSchemas[name]
    for (const sample of samples[name]) {
      const problems: string[] = []
      const valid = type.isValid(sample, {
        noUndeclaredFields: true,
        errorHook: (path) => problems.push(path.join('.')),
      })
      expect(problems, `${name} fields that do not match the schema`).toEqual([])
      expect(valid).toBe(true)
      expect(keyDrift(type, sample), `${name} example keys differ from the schema`).toEqual([])
      expect({ ...(type.fromBuffer(type.toBuffer(sample)) as object) }).toEqual(sample)
    }
  })

  it('catches a drifted field', () => {
    const drifted = { ...examples.exampleShop(), nickname: 'x' }
    expect(avroSchemas.Shop.type.isValid(drifted, { noUndeclaredFields: true })).toBe(false)
    const { googlePlaceId: _dropped, ...missing } = examples.exampleShop()
    expect(keyDrift(avroSchemas.Shop.type, missing)).toEqual(['$.googlePlaceId missing'])
    const raw = examples.exampleRawCardTransaction()
    const nested = { ...raw, card: { ...raw.card!, extra: '1' } }
    expect(keyDrift(avroSchemas.RawTransaction.type, nested)).toEqual(['$.card.extra undeclared'])
  })
})

describe('rawTransactionProblems', () => {
  it('accepts the examples', () => {
    expect(rawTransactionProblems(examples.exampleRawCardTransaction())).toEqual([])
    expect(rawTransactionProblems(examples.exampleRawBankTransfer())).toEqual([])
  })

  it('requires exactly one of card or transfer', () => {
    const both = { ...examples.exampleRawCardTransaction(), transfer: examples.exampleBankTransfer() }
    const neither = { ...examples.exampleRawCardTransaction(), card: null }
    expect(rawTransactionProblems(both)).toEqual([
      'exactly one of card or transfer must be set, both are set',
    ])
    expect(rawTransactionProblems(neither)).toEqual([
      'exactly one of card or transfer must be set, both are null',
    ])
  })

  it('rejects float-like or signed amounts and lower-case currencies', () => {
    for (const amount of ['1e3', '-5.00', '12,50', '.5', '']) {
      expect(rawTransactionProblems({ ...examples.exampleRawCardTransaction(), amount })[0]).toMatch(
        /^amount must be/,
      )
    }
    expect(rawTransactionProblems({ ...examples.exampleRawCardTransaction(), currency: 'czk' })[0]).toMatch(
      /^currency/,
    )
  })

  it('refuses anything longer than a BIN without echoing it, and allows null and empty', () => {
    const pan = '4761739001010119'
    const raw = examples.exampleRawCardTransaction()
    const problems = rawTransactionProblems({ ...raw, card: { ...raw.card!, cardBin: pan } })
    expect(problems).toEqual([
      'card.cardBin must be exactly the first 6 digits of the card number (or null/""), got 16 characters',
    ])
    expect(problems.join()).not.toContain(pan)
    expect(rawTransactionProblems({ ...raw, card: { ...raw.card!, cardBin: null } })).toEqual([])
    expect(rawTransactionProblems({ ...raw, card: { ...raw.card!, cardBin: '' } })).toEqual([])
  })
})

describe('subjects', () => {
  it('uses TopicNameStrategy', () => {
    expect(valueSubject('transactions.raw.v1')).toBe('transactions.raw.v1-value')
    expect(keySubject('transactions.raw.v1')).toBe('transactions.raw.v1-key')
    expect(() => valueSubject('')).toThrow(/topic name/)
  })
})
