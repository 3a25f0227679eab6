import type { TopicCodec } from '@tep/kafka'
import { avroSchema, exampleEnrichedTransaction, type EnrichedTransaction, type RawTransaction } from '@tep/schemas'
import avro from 'avsc'
import { describe, expect, it } from 'vitest'
import { EnrichedEncoder } from './enriched-encoder.ts'

const enrichedSchema = avroSchema('EnrichedTransaction')
const rawType = avroSchema('RawTransaction').type
const ENRICHED_ID = 41
const RAW_ID = 7
const EVOLVED_RAW_ID = 8
/** RawTransaction as a later producer writes it: one more field, so its bytes are not the enriched event's `raw`. */
const evolvedRaw = avro.Type.forSchema({
  ...(rawType.schema() as object),
  fields: [...(rawType.schema() as { fields: object[] }).fields, { name: 'note', type: ['null', 'string'], default: null }],
} as avro.Schema)

const frame = (id: number, body: Buffer): Buffer => {
  const header = Buffer.alloc(5)
  header.writeInt32BE(id, 1)
  return Buffer.concat([header, body])
}

/** The codec's whole encode (what every record took before), counted. */
function codec() {
  const calls = { encodeSync: 0 }
  const c = {
    schema: enrichedSchema,
    encodeSync: (value: EnrichedTransaction) => {
      calls.encodeSync++
      if (!enrichedSchema.type.isValid(value)) throw new Error('the codec names the bad field')
      return frame(ENRICHED_ID, enrichedSchema.type.toBuffer(value))
    },
  } as unknown as TopicCodec<EnrichedTransaction>
  return { codec: c, calls }
}

const writerType = (id: number): Promise<avro.Type> =>
  id === RAW_ID ? Promise.resolve(avro.Type.forSchema(rawType.schema() as avro.Schema)) : id === EVOLVED_RAW_ID ? Promise.resolve(evolvedRaw) : Promise.reject(new Error('unknown id'))

/** Random enriched events (every union branch over many draws), each with a random raw event. */
function randomEvent(i: number): { enriched: EnrichedTransaction; rawValue: Buffer } {
  const raw = rawType.random() as unknown as RawTransaction
  if (i % 5 === 0) raw.transactionId = `tx-${i}-Plzeň 🛒`
  const enriched = { ...(enrichedSchema.type.random() as unknown as EnrichedTransaction), raw, transactionId: raw.transactionId }
  return { enriched, rawValue: frame(RAW_ID, rawType.toBuffer(raw)) }
}

const learned = () => new Promise((resolve) => setImmediate(resolve))

describe('EnrichedEncoder', () => {
  it('writes, with the raw bytes spliced in, exactly what encoding the whole event writes', async () => {
    const { codec: c, calls } = codec()
    const encoder = new EnrichedEncoder(c, ENRICHED_ID, writerType)
    const first = randomEvent(0)
    // The raw writer schema is not known yet: the whole encode, and it is looked up.
    expect(encoder.encode(first.enriched, first.rawValue)).toEqual(frame(ENRICHED_ID, enrichedSchema.type.toBuffer(first.enriched)))
    expect(calls.encodeSync).toBe(1)
    await learned()
    for (let i = 1; i <= 400; i++) {
      const { enriched, rawValue } = randomEvent(i)
      const bytes = encoder.encode(enriched, rawValue)
      expect(bytes).toEqual(frame(ENRICHED_ID, enrichedSchema.type.toBuffer(enriched)))
      expect(enrichedSchema.type.fromBuffer(bytes.subarray(5))).toEqual(enrichedSchema.type.fromBuffer(enrichedSchema.type.toBuffer(enriched)))
    }
    // Spliced: the whole encode was not used again.
    expect(calls.encodeSync).toBe(1)
  })

  it('grows its buffer for a value larger than it', async () => {
    const { codec: c } = codec()
    const encoder = new EnrichedEncoder(c, ENRICHED_ID, writerType)
    encoder.encode(exampleEnrichedTransaction(), frame(RAW_ID, rawType.toBuffer(exampleEnrichedTransaction().raw)))
    await learned()
    const event = exampleEnrichedTransaction()
    const raw = { ...event.raw, transactionId: 'x'.repeat(70_000) }
    const enriched = { ...event, raw, handle: 'h'.repeat(50_000) }
    expect(encoder.encode(enriched, frame(RAW_ID, rawType.toBuffer(raw)))).toEqual(frame(ENRICHED_ID, enrichedSchema.type.toBuffer(enriched)))
  })

  it('takes the whole encode for a raw value of another writer schema, an unframed one, or an event that does not encode', async () => {
    const { codec: c, calls } = codec()
    const encoder = new EnrichedEncoder(c, ENRICHED_ID, writerType)
    const event = exampleEnrichedTransaction()
    const evolvedValue = frame(EVOLVED_RAW_ID, evolvedRaw.toBuffer({ ...event.raw, note: 'pozn.' }))
    encoder.encode(event, evolvedValue)
    await learned()
    // Its bytes hold the extra field: splicing them would corrupt the event.
    expect(encoder.encode(event, evolvedValue)).toEqual(frame(ENRICHED_ID, enrichedSchema.type.toBuffer(event)))
    expect(encoder.encode(event, null)).toEqual(frame(ENRICHED_ID, enrichedSchema.type.toBuffer(event)))
    expect(encoder.encode(event, Buffer.from('not avro'))).toEqual(frame(ENRICHED_ID, enrichedSchema.type.toBuffer(event)))
    expect(calls.encodeSync).toBe(4)
    encoder.encode(event, frame(RAW_ID, rawType.toBuffer(event.raw)))
    await learned()
    const bad = { ...event, status: 'NOT A STATUS' } as unknown as EnrichedTransaction
    expect(() => encoder.encode(bad, frame(RAW_ID, rawType.toBuffer(event.raw)))).toThrow('the codec names the bad field')
  })
})
