import { COMPATIBILITY, SchemaType } from '@kafkajs/confluent-schema-registry'
import { afterAll, describe, expect, inject, it } from 'vitest'
import {
  AvroSerde,
  confluentFrame,
  createSchemaRegistry,
  ensureTopics,
  registerSubjectSchema,
  SchemaRegistryUnavailableError,
  UNDECODABLE_CODES,
  UndecodableRecordError,
} from '@tep/kafka'
import {
  avroSchemas,
  exampleEnrichedTransaction,
  exampleRawCardTransaction,
  parseAvroSchema,
  valueSubject,
  type AvroSchemaJson,
} from '@tep/schemas'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'

const kit = createKafkaTestKit()
afterAll(() => kit.disconnectAll())
const registryUrl = inject('registryUrl')

async function subjectLevel(subject: string): Promise<string> {
  const res = await fetch(`${registryUrl}/config/${encodeURIComponent(subject)}`)
  return ((await res.json()) as { compatibilityLevel: string }).compatibilityLevel
}

/** Registers a schema the way a foreign tool would: a version, no subject-level rule. */
async function registerWithoutRule(subject: string, schema: AvroSchemaJson): Promise<void> {
  const res = await fetch(`${registryUrl}/subjects/${encodeURIComponent(subject)}/versions`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ schema: JSON.stringify(schema) }),
  })
  expect(res.status, await res.clone().text()).toBe(200)
}

describe('Avro through the schema registry', () => {
  it('round-trips an event through Kafka in Confluent wire format under <topic>-value with BACKWARD', async () => {
    const topic = uniqueName('avro-enriched')
    await ensureTopics(kit.kafka, [
      {
        name: topic,
        partitions: 1,
        cleanupPolicy: 'delete',
        valueSchema: 'EnrichedTransaction',
        key: 'transactionId',
        configs: {},
        description: 'test',
      },
    ])
    const serde = new AvroSerde({ registry: createSchemaRegistry({ url: registryUrl }) })
    const codec = serde.topic(topic, 'EnrichedTransaction')
    const event = exampleEnrichedTransaction()
    const value = await codec.encode(event)

    expect(value[0]).toBe(0)
    const registeredId = (await (
      await fetch(`${registryUrl}/subjects/${valueSubject(topic)}/versions/latest`)
    ).json()) as { id: number }
    expect(value.readInt32BE(1)).toBe(registeredId.id)
    expect(await subjectLevel(valueSubject(topic))).toBe('BACKWARD')

    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic, messages: [{ key: event.transactionId, value }] })
    const [received] = await kit.collect(topic, 1)
    // A fresh serde has no cache: the writer schema comes from the registry by id.
    const fresh = new AvroSerde({ registry: createSchemaRegistry({ url: registryUrl }) }).topic(
      topic,
      'EnrichedTransaction',
    )
    const decoded = await fresh.decode(received!.value)
    expect(JSON.parse(JSON.stringify(decoded))).toEqual(JSON.parse(JSON.stringify(event)))
  })

  it('reads a record written with an older released version as the current shape', async () => {
    const topic = uniqueName('avro-old-writer')
    const registry = createSchemaRegistry({ url: registryUrl })
    const current = avroSchemas.RawTransaction.schema
    // An "older" RawTransaction: the same without the optional customerId and accountId fields.
    const older = {
      ...current,
      fields: (current.fields as AvroSchemaJson[]).filter(
        (f) => f.name !== 'customerId' && f.name !== 'accountId',
      ),
    }
    const olderId = await registerSubjectSchema(registry, valueSubject(topic), older)
    const serde = new AvroSerde({ registry })
    const codec = serde.topic(topic, 'RawTransaction')
    const currentId = await codec.register()
    expect(currentId).not.toBe(olderId)

    const { customerId: _c, accountId: _a, ...oldEvent } = exampleRawCardTransaction()
    const value = confluentFrame(olderId, parseAvroSchema(older).toBuffer(oldEvent))
    const decoded = await codec.decode(value)
    expect(decoded.customerId).toBeNull()
    expect(decoded.accountId).toBeNull()
    expect(decoded.card?.terminalId).toBe(oldEvent.card!.terminalId)
  })

  it('registers under a subject that already exists without its own compatibility rule (Apicurio answers 200 NONE there)', async () => {
    const subject = valueSubject(uniqueName('avro-foreign'))
    const schema = avroSchemas.Invalidation.schema
    await registerWithoutRule(subject, schema)
    expect(await subjectLevel(subject)).toBe('NONE')

    // The plain client trips over the 200-instead-of-404 answer; this is the bug the wrapper exists for.
    const registry = createSchemaRegistry({ url: registryUrl })
    await expect(
      registry.register(
        { type: SchemaType.AVRO, schema: JSON.stringify(schema) },
        { subject, compatibility: COMPATIBILITY.BACKWARD },
      ),
    ).rejects.toThrow(/Compatibility does not match/)

    const id = await registerSubjectSchema(registry, subject, schema)
    expect(id).toBeGreaterThan(0)
    expect(await subjectLevel(subject)).toBe('BACKWARD')
  })

  it('reports an unreachable registry as a retriable failure, never as an undecodable record', async () => {
    // Port 1 on loopback refuses connections: the real client's way of failing (an HTTP 400 carrying ECONNREFUSED).
    const codec = new AvroSerde({
      registry: createSchemaRegistry({ url: 'http://127.0.0.1:1/apis/ccompat/v7', retries: 0 }),
    }).topic(uniqueName('avro-down'), 'Shop')
    const decodeError = await codec.decode(confluentFrame(1, Buffer.from([2, 65]))).catch((e: unknown) => e)
    expect(decodeError).toBeInstanceOf(SchemaRegistryUnavailableError)
    expect((decodeError as SchemaRegistryUnavailableError).retriable).toBe(true)
    const registerError = await codec.register().catch((e: unknown) => e)
    expect(registerError).toBeInstanceOf(SchemaRegistryUnavailableError)
  })

  it('reports an unknown schema id as an undecodable record, not a registry outage', async () => {
    const codec = new AvroSerde({ registry: createSchemaRegistry({ url: registryUrl }) }).topic(
      uniqueName('avro-unknown'),
      'Shop',
    )
    const error = await codec
      .decode(confluentFrame(2_000_000_000, Buffer.from([2, 65])))
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(UndecodableRecordError)
    expect((error as UndecodableRecordError).code).toBe(UNDECODABLE_CODES.unknownSchemaId)
  })
})
