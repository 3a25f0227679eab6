import { compatibilityPartitioner, type Consumer, type Producer } from '@platformatic/kafka'
import type { InputMessage } from './input-message.ts'
import { describe, expect, it } from 'vitest'
import { assignPartitions, chunkMessages, commitTransaction, toPipelineRecord, type WireMessage } from './eos-transaction.ts'
import type { TxnOffsetCommitter } from './txn-offset-commit.ts'

const msg = (topic: string, key: string, bytes: number, partition?: number): WireMessage => ({
  topic,
  key: Buffer.from(key),
  value: Buffer.alloc(bytes),
  ...(partition === undefined ? {} : { partition }),
})

describe('the record a transform sees', () => {
  const message = (headerEntries: [Buffer, Buffer][]): InputMessage =>
    ({
      topic: 'raw',
      partition: 3,
      offset: 2n ** 40n + 7n,
      timestamp: 1_795_000_000_123n,
      key: Buffer.from('k1'),
      value: Buffer.from('v1'),
      headerEntries,
    }) as unknown as InputMessage

  it('has the KafkaJS fields, offset and timestamp as strings and headers by name (repeated names as lists)', () => {
    const record = toPipelineRecord(message([[Buffer.from('a'), Buffer.from('1')], [Buffer.from('b'), Buffer.from('2')], [Buffer.from('a'), Buffer.from('3')]]))
    expect(record.topic).toBe('raw')
    expect(record.partition).toBe(3)
    expect(record.offset).toBe('1099511627783')
    expect(record.timestamp).toBe('1795000000123')
    expect(record.key).toEqual(Buffer.from('k1'))
    expect(record.value).toEqual(Buffer.from('v1'))
    expect(record.headers).toEqual({ a: [Buffer.from('1'), Buffer.from('3')], b: Buffer.from('2') })
    // Made once: a transform that adds a header to the object sees it again.
    expect(record.headers).toBe(record.headers)
    expect(JSON.parse(JSON.stringify(record))).toMatchObject({ topic: 'raw', partition: 3, offset: '1099511627783', timestamp: '1795000000123' })
  })

  it('gives an empty headers object, and null key and value when the message has none', () => {
    const record = toPipelineRecord({ ...message([]), key: undefined, value: undefined } as unknown as InputMessage)
    expect(record.headers).toEqual({})
    expect(record.key).toBeNull()
    expect(record.value).toBeNull()
  })
})

describe('assignPartitions', () => {
  it("gives keyed messages the Java client's partition and keeps explicit ones", () => {
    const messages = [msg('out', 'tx-1', 10), msg('out', 'tx-2', 10), msg('other', 'tx-1', 10, 5)]
    assignPartitions(messages, (topic) => (topic === 'out' ? 6 : 12))
    expect(messages[0]!.partition).toBe(compatibilityPartitioner(messages[0]!, Buffer.from('tx-1')) % 6)
    expect(messages[1]!.partition).toBe(compatibilityPartitioner(messages[1]!, Buffer.from('tx-2')) % 6)
    expect(messages[2]!.partition).toBe(5)
  })
})

describe('chunkMessages', () => {
  it('puts a transaction spread over partitions in one send when no partition exceeds its bound', () => {
    // 3,000 records of 900 bytes over 6 partitions: 2.7 MB, about 450 kB per partition.
    const messages = Array.from({ length: 3_000 }, (_, i) => msg('out', `k${i}`, 900, i % 6))
    const chunks = chunkMessages(messages, 512 * 1024, 8 * 1024 * 1024)
    expect(chunks).toHaveLength(1)
    expect(chunks[0]).toEqual(messages)
  })

  it('splits when one partition would pass its bound, keeping the order', () => {
    // All on one partition (a skewed key): 3,000 × 900 bytes must not go as one 2.7 MB batch.
    const messages = Array.from({ length: 3_000 }, (_, i) => msg('out', `k${i}`, 900, 0))
    const chunks = chunkMessages(messages, 512 * 1024, 8 * 1024 * 1024)
    expect(chunks.length).toBeGreaterThanOrEqual(6)
    expect(chunks.flat()).toEqual(messages)
    for (const chunk of chunks) expect(chunk.reduce((n, m) => n + m.value!.length + m.key!.length + 64, 0)).toBeLessThanOrEqual(512 * 1024)
  })

  it('bounds the whole send and sends a message larger than the bound alone', () => {
    const messages = [msg('a', 'x', 100, 0), msg('a', 'y', 2_000, 1), msg('a', 'z', 100, 2)]
    const chunks = chunkMessages(messages, 10_000, 1_000)
    expect(chunks.map((c) => c.map((m) => m.key!.toString()))).toEqual([['x'], ['y'], ['z']])
  })

  it('counts partitions of different topics apart', () => {
    const messages = [msg('a', 'x', 600, 0), msg('b', 'y', 600, 0)]
    expect(chunkMessages(messages, 1_000, 10_000)).toHaveLength(1)
    expect(chunkMessages([msg('a', 'x', 600, 0), msg('a', 'y', 600, 0)], 1_000, 10_000)).toHaveLength(2)
  })
})

describe('commitTransaction', () => {
  /** A producer whose requests each take a turn of the event loop and write what happens to `log`. */
  function fakes(log: string[]) {
    const step = async (start: string, end: string) => {
      log.push(start)
      await new Promise((resolve) => setImmediate(resolve))
      log.push(end)
    }
    const tx = {
      id: 'txn-1',
      completed: false,
      addPartitions: () => step('AddPartitionsToTxn', 'AddPartitionsToTxn done'),
      send: ({ messages }: { messages: WireMessage[] }) => step(`Produce ${messages.length}`, 'Produce done'),
      addConsumer: () => step('AddOffsetsToTxn', 'AddOffsetsToTxn done'),
      commit: () => step('EndTxn', 'EndTxn done'),
      abort: () => step('EndTxn(abort)', 'EndTxn(abort) done'),
    }
    const producer = {
      metadata: async () => ({ topics: new Map([['out', { partitionsCount: 2 }]]) }),
      beginTransaction: async () => tx,
    } as unknown as Producer
    const offsets = { commit: () => step('TxnOffsetCommit', 'TxnOffsetCommit done') } as unknown as TxnOffsetCommitter
    return { producer, offsets, consumer: {} as Consumer }
  }

  it('sends the offsets only after every produce answered, and ends the transaction last', async () => {
    const log: string[] = []
    const { producer, offsets, consumer } = fakes(log)
    // Three sends: one partition gets more than a send may carry (512 KB).
    const outputs = Array.from({ length: 3 }, (_, i) => msg('out', `k${i}`, 300 * 1024, 0))
    await commitTransaction(producer, consumer, offsets, outputs, [])
    expect(log[0]).toBe('AddPartitionsToTxn')
    // The produce and AddOffsetsToTxn go side by side, after every partition was added.
    expect(log.indexOf('AddOffsetsToTxn')).toBeGreaterThan(log.indexOf('AddPartitionsToTxn done'))
    expect(log.indexOf('AddOffsetsToTxn')).toBeLessThan(log.indexOf('Produce done'))
    // TxnOffsetCommit never overlaps a Produce: both would be verified with the
    // transaction coordinator at once, and the broker refuses the older check.
    expect(log.indexOf('TxnOffsetCommit')).toBeGreaterThan(log.lastIndexOf('Produce done'))
    expect(log.indexOf('TxnOffsetCommit')).toBeGreaterThan(log.indexOf('AddOffsetsToTxn done'))
    expect(log.filter((e) => /^Produce \d/.test(e))).toEqual(['Produce 1', 'Produce 1', 'Produce 1'])
    expect(log.slice(-2)).toEqual(['EndTxn', 'EndTxn done'])
  })
})
