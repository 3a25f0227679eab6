import { compatibilityPartitioner } from '@platformatic/kafka'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createKafka, createRecordProducer, type RecordProducer } from '@tep/kafka'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'

const kit = createKafkaTestKit()
const kafka = createKafka({ brokers: inject('kafkaBrokers'), clientId: uniqueName('records'), logLevel: 'error' })
const producers: RecordProducer[] = []
afterAll(async () => {
  await Promise.all(producers.map((p) => p.close()))
  await kit.disconnectAll()
})

describe('createRecordProducer', () => {
  it('writes a 3 MB list in call order, keys where the Java client puts them, key-less records spread', async () => {
    const topic = uniqueName('records')
    await kit.createTopics([topic], 3)
    const producer = createRecordProducer(kafka)
    producers.push(producer)
    const messages = Array.from({ length: 3_000 }, (_, i) => ({ key: `k-${i}`, value: Buffer.alloc(1_000, i % 256) }))
    // Two calls without waiting: the second call's records stay behind the first's.
    await Promise.all([
      producer.send(topic, messages.slice(0, 1_500)),
      producer.send(topic, messages.slice(1_500)),
      producer.send(topic, [0, 1, 2].map((i) => ({ value: Buffer.from(`no key ${i}`) }))),
    ])

    const read = await readTopic(kit.kafka, topic)
    expect(read).toHaveLength(3_003)
    for (const m of read.filter((r) => r.key !== null))
      expect(m.partition).toBe(compatibilityPartitioner(undefined as never, m.key!) % 3)
    for (const p of [0, 1, 2]) {
      const order = read.filter((m) => m.partition === p && m.key !== null).map((m) => Number(m.key!.toString().slice(2)))
      expect(order).toEqual([...order].sort((a, b) => a - b))
    }
    const keyless = read.filter((m) => m.key === null).map((m) => m.partition)
    expect(keyless.sort()).toEqual([0, 1, 2])
  })

  it('refuses a missing topic instead of waiting forever', async () => {
    const producer = createRecordProducer(kafka)
    producers.push(producer)
    await expect(producer.send(uniqueName('missing'), [{ key: 'k', value: Buffer.from('v') }])).rejects.toThrow(/Unknown topic/)
  })
})
