import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry'
import {
  avroSchemas,
  exampleEnrichedTransaction,
  exampleRawBankTransfer,
  exampleRawCardTransaction,
  exampleShop,
  type EnrichedTransaction,
  type RawTransaction,
} from '@tep/schemas'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AvroSerde, confluentFrame, InvalidEventError } from './avro-serde.ts'
import { SplicingEncoder } from './avro-splice.ts'

/**
 * Schema id 8 is RawTransaction as it is today; id 9 an older RawTransaction
 * without `refresh` (the reader fills its default: not the same bytes); every
 * registration answers id 21.
 */
const OLD_RAW = (() => {
  const schema = JSON.parse(JSON.stringify(avroSchemas.RawTransaction.schema)) as { fields: { name: string }[] }
  schema.fields = schema.fields.filter((f) => f.name !== 'refresh')
  return schema
})()
function registry(): SchemaRegistry {
  return {
    getSchema: async (id: number) => {
      if (id === 8) return avroSchemas.RawTransaction.type
      if (id === 9) return (await import('avsc')).default.Type.forSchema(OLD_RAW as never, { registry: {} })
      throw Object.assign(new Error(`Schema ${id} not found.`), { status: 404 })
    },
    api: {
      Subject: {
        config: async () => {
          throw Object.assign(new Error('not found'), { status: 404 })
        },
        updateConfig: async () => undefined,
      },
    },
    register: async () => ({ id: 21 }),
  } as unknown as SchemaRegistry
}

async function setUp() {
  const serde = new AvroSerde({ registry: registry() })
  const raw = serde.topic('transactions.raw.v1', 'RawTransaction')
  const enriched = serde.topic('transactions.enriched.v1', 'EnrichedTransaction')
  const encoder = new SplicingEncoder(enriched, await enriched.register(), [
    { field: 'raw', schema: avroSchemas.RawTransaction },
    { field: 'shop', schema: avroSchemas.Shop },
    { field: 'merchant', schema: avroSchemas.Merchant },
  ])
  return { raw, enriched, encoder }
}

const framedRaw = (raw: RawTransaction, id = 8): Buffer => confluentFrame(id, avroSchemas.RawTransaction.type.toBuffer(raw))

/** An enriched event of `raw` in each status, with and without the optional fields set. */
const enrichedOf = fc
  .record({
    id: fc.string({ minLength: 1, maxLength: 40 }),
    card: fc.boolean(),
    status: fc.constantFrom('MATCHED', 'NOT_FOUND', 'REJECTED'),
    handle: fc.option(fc.string({ maxLength: 30 }), { nil: null }),
    name: fc.string({ maxLength: 90 }),
    backfill: fc.option(fc.constant('set'), { nil: undefined }),
  })
  .map((a) => {
    const base = exampleEnrichedTransaction()
    const raw = a.card ? exampleRawCardTransaction(a.id) : exampleRawBankTransfer(a.id)
    const value: EnrichedTransaction = {
      ...base,
      transactionId: raw.transactionId,
      raw,
      status: a.status as EnrichedTransaction['status'],
      handle: a.handle,
      shop: a.status === 'MATCHED' ? { ...base.shop!, type: a.name } : null,
      merchant: a.status === 'MATCHED' ? base.merchant : null,
    }
    // The ingest leaves `backfill` out (undefined): its default (null) is written.
    if (a.backfill === undefined) delete (value as Partial<EnrichedTransaction>).backfill
    return value
  })

describe('SplicingEncoder (the raw event inside the enriched one, copied as bytes)', () => {
  it('writes exactly the bytes encodeSync writes, for any enriched event, with any of its embedded events given as bytes', async () => {
    const { raw, enriched, encoder } = await setUp()
    await fc.assert(
      fc.asyncProperty(enrichedOf, fc.boolean(), fc.boolean(), async (value, shopAsBytes, merchantAsBytes) => {
        const { value: decoded, body } = await raw.decodeWithBody(framedRaw(value.raw))
        expect(body).toBeDefined()
        const event = { ...value, raw: decoded }
        const expected = enriched.encodeSync(event)
        expect(encoder.encode(event, [body])).toEqual(expected)
        // Fields given as bytes are not read from the value.
        const shopBytes = shopAsBytes && event.shop !== null ? avroSchemas.Shop.type.toBuffer(event.shop) : undefined
        const merchantBytes = merchantAsBytes && event.merchant !== null ? avroSchemas.Merchant.type.toBuffer(event.merchant) : undefined
        const without = {
          ...event,
          raw: null,
          shop: shopBytes === undefined ? event.shop : null,
          merchant: merchantBytes === undefined ? event.merchant : null,
        } as unknown as EnrichedTransaction
        expect(encoder.encode(without, [body, shopBytes, merchantBytes])).toEqual(expected)
      }),
      { numRuns: 300 },
    )
  })

  it('gives no body for a raw event written with another schema, so the enriched one is encoded whole', async () => {
    const { raw, enriched, encoder } = await setUp()
    const old = exampleRawCardTransaction('tx-old')
    const { refresh: _refresh, ...oldShape } = old
    const framed = confluentFrame(9, (await import('avsc')).default.Type.forSchema(OLD_RAW as never, { registry: {} }).toBuffer(oldShape))
    const { value: decoded, body } = await raw.decodeWithBody(framed)
    expect(body).toBeUndefined()
    const event = { ...exampleEnrichedTransaction(), transactionId: 'tx-old', raw: decoded }
    expect(encoder.encode(event, [body])).toEqual(enriched.encodeSync(event))
  })

  it('grows its buffer for large events, and each result owns its bytes', async () => {
    const { raw, enriched, encoder } = await setUp()
    const big = { ...exampleEnrichedTransaction(), shop: { ...exampleEnrichedTransaction().shop!, tags: ['t'.repeat(100_000)] } }
    const { body } = await raw.decodeWithBody(framedRaw(big.raw))
    const small = encoder.encode(exampleEnrichedTransaction(), [body])
    const large = encoder.encode({ ...big, shop: null }, [body, avroSchemas.Shop.type.toBuffer(big.shop)])
    expect(large).toEqual(enriched.encodeSync(big))
    expect(small).toEqual(enriched.encodeSync(exampleEnrichedTransaction()))
  })

  it('refuses an event that breaks the schema with the codec own error, naming the field', async () => {
    const { raw, encoder } = await setUp()
    const { body } = await raw.decodeWithBody(framedRaw(exampleRawCardTransaction()))
    const bad = { ...exampleEnrichedTransaction(), status: 'MAYBE' } as unknown as EnrichedTransaction
    expect(() => encoder.encode(bad, [body])).toThrow(InvalidEventError)
    expect(() => encoder.encode({ ...bad, shop: null }, [body, avroSchemas.Shop.type.toBuffer(exampleShop())])).toThrow(/at: status$/)
    // A field written from the value is checked inside too; one given as bytes is not read.
    const badRaw = { ...exampleEnrichedTransaction(), raw: { ...exampleRawCardTransaction(), amount: 5 } } as unknown as EnrichedTransaction
    expect(() => encoder.encode(badRaw, [])).toThrow(/at: raw\.amount$/)
    expect(encoder.encode(badRaw, [body])).toEqual(encoder.encode(exampleEnrichedTransaction(), [body]))
  })

  it('refuses a field that cannot embed the schema, and a field that does not exist', async () => {
    const serde = new AvroSerde({ registry: registry() })
    const enriched = serde.topic('transactions.enriched.v1', 'EnrichedTransaction')
    expect(() => new SplicingEncoder(enriched, 21, [{ field: 'raw', schema: avroSchemas.Shop }])).toThrow(/raw cannot embed Shop/)
    expect(() => new SplicingEncoder(enriched, 21, [{ field: 'shop', schema: avroSchemas.Merchant }])).toThrow(/shop cannot embed Merchant/)
    expect(() => new SplicingEncoder(enriched, 21, [{ field: 'nope', schema: avroSchemas.Shop }])).toThrow(/no field nope/)
  })
})
