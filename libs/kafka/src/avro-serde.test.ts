import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry'
import { avroSchemas, exampleRawCardTransaction, exampleShop, rawTransactionProblems } from '@tep/schemas'
import { describe, expect, it } from 'vitest'
import { AvroSerde, confluentFrame, confluentUnframe, InvalidEventError } from './avro-serde.ts'
import { SchemaRegistryUnavailableError, UNDECODABLE_CODES, UndecodableRecordError } from './errors.ts'

/** A registry stand-in that knows schema ids 7 (Shop) and 8 (RawTransaction); other ids answer like the real client. */
function fakeRegistry(behaviour: 'ok' | 'down' = 'ok'): SchemaRegistry {
  return {
    getSchema: async (id: number) => {
      if (behaviour === 'down')
        throw Object.assign(new Error('Error, status 400: connect ECONNREFUSED 127.0.0.1:1'), { status: 400 })
      if (id === 7) return avroSchemas.Shop.type
      if (id === 8) return avroSchemas.RawTransaction.type
      throw Object.assign(new Error(`Schema ${id} not found.`), { status: 404 })
    },
  } as unknown as SchemaRegistry
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (err) {
    expect(err).toBeInstanceOf(UndecodableRecordError)
    expect((err as UndecodableRecordError).retriable).toBe(false)
    return (err as UndecodableRecordError).code
  }
  throw new Error('expected a decoding failure')
}

describe('Confluent framing', () => {
  it('writes magic byte 0 and the big-endian schema id before the body', () => {
    const framed = confluentFrame(258, Buffer.from([9, 9]))
    expect([...framed]).toEqual([0, 0, 0, 1, 2, 9, 9])
    expect(confluentUnframe(framed)).toEqual({ schemaId: 258, body: Buffer.from([9, 9]) })
  })
})

describe('AvroSerde decoding', () => {
  const serde = new AvroSerde({ registry: fakeRegistry() })
  const shops = serde.topic('merchant.shops.v1', 'Shop')

  it('decodes a value written with a known schema id', async () => {
    const shop = exampleShop()
    const value = confluentFrame(7, avroSchemas.Shop.type.toBuffer(shop))
    expect({ ...(await shops.decode(value)) }).toEqual(shop)
  })

  it('decodes without a promise once the writer schema was fetched, with the same results and errors', async () => {
    const serde = new AvroSerde({ registry: fakeRegistry() })
    const codec = serde.topic('merchant.shops.v1', 'Shop')
    const value = confluentFrame(7, avroSchemas.Shop.type.toBuffer(exampleShop()))
    expect(codec.decodeWithBodyIfReady(value)).toBeUndefined()
    const decoded = await codec.decodeWithBody(value)
    expect(codec.decodeWithBodyIfReady(value)).toEqual(decoded)
    expect(decoded.body).toEqual(avroSchemas.Shop.type.toBuffer(exampleShop()))
    expect(() => codec.decodeWithBodyIfReady(confluentFrame(7, Buffer.from([1, 2])))).toThrow(UndecodableRecordError)
    expect(() => codec.decodeWithBodyIfReady(null)).toThrow(UndecodableRecordError)
  })

  it('gives each kind of undecodable value its own non-retriable code', async () => {
    const body = avroSchemas.Shop.type.toBuffer(exampleShop())
    expect(await codeOf(shops.decode(null))).toBe(UNDECODABLE_CODES.emptyValue)
    expect(await codeOf(shops.decode(Buffer.from([0, 0, 0])))).toBe(UNDECODABLE_CODES.emptyValue)
    expect(await codeOf(shops.decode(Buffer.concat([Buffer.from([1, 0, 0, 0, 7]), body])))).toBe(
      UNDECODABLE_CODES.badMagicByte,
    )
    expect(await codeOf(shops.decode(confluentFrame(99, body)))).toBe(UNDECODABLE_CODES.unknownSchemaId)
    expect(await codeOf(shops.decode(confluentFrame(7, body.subarray(0, 10))))).toBe(
      UNDECODABLE_CODES.corruptPayload,
    )
    const raw = avroSchemas.RawTransaction.type.toBuffer(exampleRawCardTransaction())
    expect(await codeOf(shops.decode(confluentFrame(8, raw)))).toBe(UNDECODABLE_CODES.incompatibleSchema)
  })

  it('turns a broken contract rule into SCHEMA_INVALID', async () => {
    const raws = serde.topic('transactions.raw.v1', 'RawTransaction', { validate: rawTransactionProblems })
    const both = { ...exampleRawCardTransaction(), transfer: null, card: null }
    const value = confluentFrame(8, avroSchemas.RawTransaction.type.toBuffer(both))
    expect(await codeOf(raws.decode(value))).toBe(UNDECODABLE_CODES.schemaInvalid)
  })

  it('reports an unreachable registry as retriable, not as an undecodable record', async () => {
    const down = new AvroSerde({ registry: fakeRegistry('down') }).topic('merchant.shops.v1', 'Shop')
    const value = confluentFrame(7, avroSchemas.Shop.type.toBuffer(exampleShop()))
    const err = await down.decode(value).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SchemaRegistryUnavailableError)
    expect((err as SchemaRegistryUnavailableError).retriable).toBe(true)
  })
})

describe('AvroSerde encoding', () => {
  /** Registration answers like Apicurio for a new subject: no config (404), PUT accepted, id 7. */
  function registeringRegistry(calls: string[]): SchemaRegistry {
    return {
      ...fakeRegistry(),
      api: {
        Subject: {
          config: async () => {
            calls.push('GET config')
            throw Object.assign(new Error('not found'), { status: 404 })
          },
          updateConfig: async ({ body }: { body: { compatibility: string } }) => {
            calls.push(`PUT config ${body.compatibility}`)
          },
        },
      },
      register: async (_schema: unknown, opts: { compatibility: string }) => {
        calls.push(`register ${opts.compatibility}`)
        return { id: 7 }
      },
    } as unknown as SchemaRegistry
  }

  it('registers once (level set before the first version), then frames with the id', async () => {
    const calls: string[] = []
    const shops = new AvroSerde({ registry: registeringRegistry(calls) }).topic('merchant.shops.v1', 'Shop')
    expect(() => shops.encodeSync(exampleShop())).toThrow(/before register\(\) resolved/)
    const [a, b] = await Promise.all([shops.encode(exampleShop()), shops.encode(exampleShop('other'))])
    expect(calls).toEqual(['GET config', 'PUT config BACKWARD', 'register BACKWARD'])
    expect(confluentUnframe(a!).schemaId).toBe(7)
    expect({ ...(avroSchemas.Shop.type.fromBuffer(confluentUnframe(b!).body) as object) }).toEqual(
      exampleShop('other'),
    )
    expect(confluentUnframe(shops.encodeSync(exampleShop())).schemaId).toBe(7)
  })

  it('refuses a value that breaks the schema, naming field paths but not values', async () => {
    const shops = new AvroSerde({ registry: registeringRegistry([]) }).topic('merchant.shops.v1', 'Shop')
    const bad = { ...exampleShop(), fetchedAt: 'yesterday-secret' } as unknown as ReturnType<
      typeof exampleShop
    >
    const err = await shops.encode(bad).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InvalidEventError)
    expect((err as InvalidEventError).retriable).toBe(false)
    expect((err as Error).message).toBe('Shop value does not match its schema at: fetchedAt')
  })

  it('encodes values of any size into separate buffers, also after a refused one', async () => {
    const shops = new AvroSerde({ registry: registeringRegistry([]) }).topic('merchant.shops.v1', 'Shop')
    await shops.register()
    // 200 kB is past the 64 kB scratch buffer and avsc's own 1 kB one.
    const big = { ...exampleShop(), tags: ['t'.repeat(200_000)] }
    const bad = { ...exampleShop(), fetchedAt: 'x' } as unknown as ReturnType<typeof exampleShop>
    const small = shops.encodeSync(exampleShop('small'))
    expect(() => shops.encodeSync(bad)).toThrow(InvalidEventError)
    const large = shops.encodeSync(big)
    const again = shops.encodeSync(exampleShop('again'))
    const decode = (b: Buffer): unknown => JSON.parse(JSON.stringify(avroSchemas.Shop.type.fromBuffer(confluentUnframe(b).body)))
    // Each result owns its bytes: a later encode must not overwrite an earlier one.
    expect(decode(small)).toEqual(exampleShop('small'))
    expect(decode(large)).toEqual(big)
    expect(decode(again)).toEqual(exampleShop('again'))
    expect(confluentUnframe(large).schemaId).toBe(7)
  })
})
