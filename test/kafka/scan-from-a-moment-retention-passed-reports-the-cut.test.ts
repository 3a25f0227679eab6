/**
 * A scan from a moment (`from`) whose records retention has partly removed starts at the oldest
 * record left, as a lookup by time must; the caller (re-enrichment's --enriched-since and
 * --from-invalidations windows) has to know that its window was cut, or it reports a whole
 * window it did not read. scanTopic says which partitions and where their log now starts.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { scanTopic } from '@tep/kafka'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'

const kit = createKafkaTestKit()
afterAll(() => kit.disconnectAll())

describe('scanTopic from a moment', () => {
  it('reports the partitions whose window retention cut, and none where the window is whole', async () => {
    const topic = uniqueName('scan-cut')
    await kit.createTopics([topic], 2)
    const t0 = Date.now() - 3_600_000
    const producer = kit.producer()
    await producer.connect()
    // Ten records a minute apart on each partition.
    await producer.send({
      topic,
      messages: [0, 1].flatMap((partition) =>
        Array.from({ length: 10 }, (_, i) => ({ partition, value: `p${partition}-${i}`, timestamp: String(t0 + i * 60_000) })),
      ),
    })
    await producer.disconnect()
    // Retention removes the first four records of partition 0 only.
    await kit.admin().deleteRecords(topic, [{ partition: 0, offset: 4n }])

    const scan = async (from: Date) => {
      const seen: string[] = []
      const result = await scanTopic({ kafka: kit.kafka, topic, from, onMessage: (m) => void seen.push(m.value!.toString('utf8')) })
      return { seen, ...result }
    }

    // From before everything: partition 0 starts at its oldest record left, offset 4: cut.
    const whole = await scan(new Date(t0 - 60_000))
    expect(whole.records).toBe(16)
    expect(whole.cutByRetention).toEqual([{ partition: 0, logStart: '4' }])

    // From the seventh minute on: records of the window on both partitions are all still there.
    const later = await scan(new Date(t0 + 6 * 60_000))
    expect(later.seen.sort()).toEqual(['p0-6', 'p0-7', 'p0-8', 'p0-9', 'p1-6', 'p1-7', 'p1-8', 'p1-9'])
    expect(later.cutByRetention).toEqual([])
  })
})
