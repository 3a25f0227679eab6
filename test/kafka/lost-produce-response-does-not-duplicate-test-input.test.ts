/**
 * Regression: once, under heavy load, the ingest test saw 16 "duplicated"
 * enriched records. The broker's log showed the pipeline had written one output
 * per input, in one committed transaction; it was the test's raw INPUT that was
 * doubled (two identical non-idempotent batches 86 ms apart in one partition).
 * KafkaJS retries a whole produce request when a partition in it fails or its
 * response is lost, and a plain producer writes again what had already been
 * appended. The input helpers now produce idempotently; this pins it by losing
 * the first produce response on purpose.
 */
import { Kafka, Partitioners, logLevel, type ProducerConfig } from 'kafkajs'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { produceRaw, serdeForTests } from '../ingest/ingest-harness.ts'
import { createKafkaTestKit, uniqueName, type KafkaTestKit } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'
import { API_KEYS, loseFirstResponse, type LostResponse } from './lost-response.ts'
import { produceInputs } from './pipeline-harness.ts'

const kit = createKafkaTestKit()
afterAll(() => kit.disconnectAll())

/** The kit, except that its producers connect through a socket that loses the first produce response. */
function lossyKit(fault: LostResponse): KafkaTestKit {
  const kafka = new Kafka({
    clientId: uniqueName('lossy'),
    brokers: inject('kafkaBrokers'),
    logLevel: logLevel.NOTHING,
    socketFactory: fault.socketFactory,
  })
  return {
    ...kit,
    kafka,
    // The kit's producer settings on the lossy client, without the idempotence the kit
    // now adds by default: the helpers below must not depend on the kit for it.
    producer: (config: ProducerConfig = {}) =>
      kafka.producer({
        createPartitioner: Partitioners.DefaultPartitioner,
        allowAutoTopicCreation: false,
        retry: { retries: 5 },
        ...config,
      }),
  }
}

async function keysIn(topic: string): Promise<string[]> {
  return (await readTopic(kit.kafka, topic)).map((m) => m.key?.toString('utf8') ?? '<null>').sort()
}

describe('a produce request whose response is lost and that is retried', () => {
  it('duplicates records sent by a plain producer (the mechanism behind the incident)', async () => {
    const topic = uniqueName('lost-response-plain')
    await kit.createTopics([topic], 3)
    const fault = loseFirstResponse(API_KEYS.produce)
    const producer = lossyKit(fault).producer({ idempotent: false })
    await producer.connect()
    try {
      await producer.send({
        topic,
        messages: [
          { key: 'a', value: '1' },
          { key: 'b', value: '2' },
        ],
      })
    } finally {
      await producer.disconnect()
    }
    expect(fault.dropped()).toBe(true)
    expect(await keysIn(topic)).toEqual(['a', 'a', 'b', 'b'])
  })

  it("leaves exactly one copy of the pipeline tests' input (produceInputs)", async () => {
    const topic = uniqueName('lost-response-inputs')
    await kit.createTopics([topic], 3)
    const fault = loseFirstResponse(API_KEYS.produce)
    await produceInputs(lossyKit(fault), topic, 20)
    expect(fault.dropped()).toBe(true)
    expect(await keysIn(topic)).toEqual(Array.from({ length: 20 }, (_, i) => `k${i}`).sort())
  })

  it("leaves exactly one copy of the ingest tests' raw input (produceRaw)", async () => {
    const topic = uniqueName('lost-response-raw')
    await kit.createTopics([topic], 3)
    const fault = loseFirstResponse(API_KEYS.produce)
    const raw = Array.from({ length: 12 }, (_, i) => ({ key: `raw-${i}`, value: Buffer.from(`bytes ${i}`) }))
    await produceRaw(lossyKit(fault), serdeForTests(), topic, [], raw)
    expect(fault.dropped()).toBe(true)
    expect(await keysIn(topic)).toEqual(raw.map((r) => r.key).sort())
  })
})
