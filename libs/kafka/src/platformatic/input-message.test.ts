import type { KafkaRecord, MessageConsumerMetadata, RecordsBatch } from '@platformatic/kafka'
import { describe, expect, it } from 'vitest'
import { fetchedMessages } from './input-message.ts'

const member: MessageConsumerMetadata = { groupId: 'g', generationId: 7, memberId: 'm-1', coordinatorId: 2 }

function record(offsetDelta: number, key: string, headers: [Buffer | null, Buffer | null][] = []): KafkaRecord {
  return { length: 0, attributes: 0, timestampDelta: BigInt(offsetDelta * 10), offsetDelta, key: Buffer.from(key), value: Buffer.from(`v-${key}`), headers }
}

function batch(firstOffset: bigint, records: KafkaRecord[], attributes = 0): RecordsBatch {
  return {
    firstOffset,
    length: 0,
    partitionLeaderEpoch: 4,
    magic: 2,
    crc: 0,
    attributes,
    lastOffsetDelta: records.length - 1,
    firstTimestamp: 1_000n,
    maxTimestamp: 2_000n,
    producerId: 1n,
    producerEpoch: 0,
    firstSequence: 0,
    records,
  }
}

describe('fetchedMessages', () => {
  it('gives the data records from the offset asked for on, with offset, timestamp, leader epoch, headers and the group generation', () => {
    const h: [Buffer, Buffer][] = [[Buffer.from('h'), Buffer.from('1')]]
    const batches = [
      batch(100n, [record(0, 'a'), record(1, 'b'), record(2, 'c', h)]),
      batch(103n, [record(0, 'marker')], 0x20), // a transaction marker holds no data
      batch(104n, [record(0, 'd')]),
    ]
    const messages = fetchedMessages('raw', 3, batches, 101n, member)
    expect(messages.map((m) => [m.key?.toString(), m.offset])).toEqual([
      ['b', 101n],
      ['c', 102n],
      ['d', 104n],
    ])
    const c = messages[1]!
    expect(c.topic).toBe('raw')
    expect(c.partition).toBe(3)
    expect(c.value?.toString()).toBe('v-c')
    expect(c.timestamp).toBe(1_020n)
    expect(c.leaderEpoch).toBe(4)
    expect(c.headerEntries).toEqual(h)
    expect(c.consumer).toBe(member)
    expect(JSON.parse(JSON.stringify(c))).toMatchObject({ topic: 'raw', partition: 3, offset: '102', timestamp: '1020' })
  })

  it("gives the batch's LogAppendTime as the timestamp when the topic uses it, as TopicReader's records do", () => {
    const [m] = fetchedMessages('raw', 0, [batch(5n, [record(0, 'a')], 0x08)], 0n, member)
    expect(m!.timestamp).toBe(2_000n)
  })
})
