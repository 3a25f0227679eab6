import { afterAll, describe, expect, inject, it } from 'vitest'
import {
  AvroSerde,
  confluentFrame,
  createSchemaRegistry,
  DLQ_HEADERS,
  readDlqHeaders,
  UNDECODABLE_CODES,
  type TransactionalPipeline,
} from '@tep/kafka'
import { avroSchemas, exampleRawCardTransaction, rawTransactionProblems } from '@tep/schemas'
import { createKafkaTestKit } from '../support/kafka-test-kit.ts'
import { CommitCounter, pipelineKafka, pipelineTopics, startPipeline } from './pipeline-harness.ts'
import { readTopic } from '../support/read-topic.ts'

const kit = createKafkaTestKit()
const running: TransactionalPipeline[] = []
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()))
  await kit.disconnectAll()
})

describe('poison records', () => {
  it('go to the DLQ with original bytes and reason headers while the records after them flow', async () => {
    const topics = await pipelineTopics(kit, 'poison', 1)
    const serde = new AvroSerde({ registry: createSchemaRegistry({ url: inject('registryUrl') }) })
    const raw = serde.topic(topics.input, 'RawTransaction', { validate: rawTransactionProblems })

    const good = async (i: number) => ({
      key: `tx-${i}`,
      value: await raw.encode(exampleRawCardTransaction(`tx-${i}`)),
    })
    const body = avroSchemas.RawTransaction.type.toBuffer(exampleRawCardTransaction('tx-bad'))
    const schemaId = await raw.register()
    const bothNull = { ...exampleRawCardTransaction('tx-neither'), card: null }
    const poison = {
      badMagic: {
        key: 'tx-magic',
        value: Buffer.concat([Buffer.from([7, 0, 0, 0, 1]), body]),
        headers: { traceparent: 'keep-me' },
      },
      unknownId: { key: 'tx-unknown', value: confluentFrame(2_000_000_001, body) },
      contract: {
        key: 'tx-neither',
        value: confluentFrame(schemaId, avroSchemas.RawTransaction.type.toBuffer(bothNull)),
      },
    }
    const messages = [
      await good(0),
      poison.badMagic,
      await good(1),
      poison.unknownId,
      await good(2),
      poison.contract,
      await good(3),
      await good(4),
    ]
    const producer = kit.producer()
    await producer.connect()
    await producer.send({ topic: topics.input, messages })

    const counter = new CommitCounter()
    const deadLettered: string[] = []
    const { pipeline, started } = startPipeline(
      pipelineKafka(),
      topics,
      {
        transform: async (record) => {
          const event = await raw.decode(record.value)
          return { topic: topics.output, key: record.key, value: Buffer.from(event.transactionId) }
        },
      },
      { onCommitted: counter.hook, onDeadLettered: (e) => deadLettered.push(e.code) },
    )
    running.push(pipeline)
    await started
    await counter.reach(messages.length)
    await pipeline.stop()

    const outputs = await readTopic(kit.kafka, topics.output)
    expect(outputs.map((m) => m.value?.toString())).toEqual(['tx-0', 'tx-1', 'tx-2', 'tx-3', 'tx-4'])

    const dlq = await readTopic(kit.kafka, topics.dlq)
    expect(dlq.map((m) => m.key?.toString())).toEqual(['tx-magic', 'tx-unknown', 'tx-neither'])
    expect(dlq.map((m) => m.value)).toEqual([
      poison.badMagic.value,
      poison.unknownId.value,
      poison.contract.value,
    ])
    const headers = dlq.map((m) => readDlqHeaders(m.headers))
    expect(headers.map((h) => h.errorCode)).toEqual([
      UNDECODABLE_CODES.badMagicByte,
      UNDECODABLE_CODES.unknownSchemaId,
      UNDECODABLE_CODES.schemaInvalid,
    ])
    expect(headers.map((h) => h.sourceOffset)).toEqual(['1', '3', '5'])
    for (const h of headers) {
      expect(h).toMatchObject({
        sourceTopic: topics.input,
        sourcePartition: '0',
        attempts: '1',
        consumerGroup: topics.groupId,
        errorName: 'UndecodableRecordError',
      })
      expect(Number.isNaN(Date.parse(h.failedAt ?? ''))).toBe(false)
      expect(h.sourceTimestamp).toMatch(/^\d+$/)
    }
    expect(headers[2]?.errorMessage).toContain('exactly one of card or transfer must be set')
    expect(dlq[0]?.headers.traceparent?.toString()).toBe('keep-me')
    expect(dlq[0]?.headers[DLQ_HEADERS.errorMessage]?.toString()).toContain('magic byte')
    expect(deadLettered).toEqual(headers.map((h) => h.errorCode))
  })
})
