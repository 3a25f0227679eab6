import { compatibilityPartitioner } from '@platformatic/kafka'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createKafka, createTransactionalWriter, isFencedError, type TransactionalWriter } from '@tep/kafka'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'
import { readTopic } from '../support/read-topic.ts'

const kit = createKafkaTestKit()
const kafka = createKafka({ brokers: inject('kafkaBrokers'), clientId: uniqueName('writer'), logLevel: 'error' })
const writers: TransactionalWriter[] = []
afterAll(async () => {
  await Promise.all(writers.map((w) => w.close()))
  await kit.disconnectAll()
})

function writer(transactionalId: string): TransactionalWriter {
  const w = createTransactionalWriter(kafka, { transactionalId, transactionTimeoutMs: 20_000 })
  writers.push(w)
  return w
}

const values = async (topic: string, readUncommitted = false) =>
  (await readTopic(kit.kafka, topic, { readUncommitted })).map((m) => m.value?.toString()).sort()

describe('createTransactionalWriter', () => {
  it('commits records to several topics together, or none of them when the work throws', async () => {
    const base = uniqueName('writer')
    const [items, cursor] = [`${base}.items`, `${base}.cursor`]
    await kit.createTopics([items], 2)
    await kit.createTopics([cursor], 1)
    const w = writer(`${base}.tx`)
    await w.start()

    const result = await w.run(async (tx) => {
      await tx.send(items, [
        { key: 'shop-1', value: Buffer.from('item 101') },
        { key: 'shop-2', value: Buffer.from('item 102'), headers: { source: 'feed' } },
      ])
      await tx.send(cursor, [{ key: 'feed', value: Buffer.from('102') }])
      return 102
    })
    expect(result).toBe(102)

    const failure = new Error('feed page could not be parsed')
    await expect(
      w.run(async (tx) => {
        await tx.send(items, [{ key: 'shop-3', value: Buffer.from('item 103') }])
        await tx.send(cursor, [{ key: 'feed', value: Buffer.from('103') }])
        throw failure
      }),
    ).rejects.toBe(failure)

    // Usable again after an abort.
    await w.run((tx) => tx.send(cursor, [{ key: 'feed', value: Buffer.from('102-confirmed') }]))

    expect(await values(items)).toEqual(['item 101', 'item 102'])
    expect(await values(cursor)).toEqual(['102', '102-confirmed'])
    // The aborted records were written, but only a read-uncommitted reader sees them.
    expect(await values(cursor, true)).toEqual(['102', '102-confirmed', '103'])
    const [withHeader] = (await readTopic(kit.kafka, items)).filter((m) => m.value?.toString() === 'item 102')
    expect(withHeader?.headers.source?.toString()).toBe('feed')
  })

  it('is fenced by a second writer with the same id: its open transaction is aborted and every later run fails', async () => {
    const base = uniqueName('fence')
    const topic = `${base}.out`
    await kit.createTopics([topic], 2)
    const id = `${base}.tx`
    const first = writer(id)
    await first.run((tx) => tx.send(topic, [{ key: 'a', value: Buffer.from('first, committed') }]))

    const second = writer(id)
    const takeover = first.run(async (tx) => {
      await tx.send(topic, [{ key: 'b', value: Buffer.from('first, open at takeover') }])
      // The successor starts while this transaction is open.
      await second.start()
    })
    const failed = await takeover.then(
      () => undefined,
      (err: unknown) => err,
    )
    expect(isFencedError(failed)).toBe(true)
    expect(first.fenced).toBe(true)
    const later = await first.run((tx) => tx.send(topic, [{ key: 'c', value: Buffer.from('first, after') }])).then(
      () => undefined,
      (err: unknown) => err,
    )
    expect(isFencedError(later)).toBe(true)

    await second.run((tx) => tx.send(topic, [{ key: 'd', value: Buffer.from('second') }]))
    expect(await values(topic)).toEqual(['first, committed', 'second'])
  })

  it('writes one send of more than 1 MB spread over partitions, each key where the Java client puts it', async () => {
    const base = uniqueName('large')
    const topic = `${base}.out`
    await kit.createTopics([topic], 3)
    const w = writer(`${base}.tx`)
    // 3,000 × 1 kB: about 1 MB per partition, 3 MB in all, in one call.
    const messages = Array.from({ length: 3_000 }, (_, i) => ({ key: `tx-${i}`, value: Buffer.alloc(1_000, i % 256) }))
    await w.run((tx) => tx.send(topic, messages))

    const read = await readTopic(kit.kafka, topic)
    expect(read).toHaveLength(3_000)
    const partitionOf = new Map(read.map((m) => [m.key!.toString(), m.partition]))
    for (const key of ['tx-0', 'tx-1', 'tx-2', 'tx-2999'])
      expect(partitionOf.get(key)).toBe(compatibilityPartitioner(undefined as never, Buffer.from(key)) % 3)
    // Per partition, the records keep the order of the call.
    for (const p of [0, 1, 2]) {
      const order = read.filter((m) => m.partition === p).map((m) => Number(m.key!.toString().slice(3)))
      expect(order).toEqual([...order].sort((a, b) => a - b))
    }

    // Where the Java client's partitioner puts these keys among 3 partitions, as KafkaJS 2.2.4's
    // DefaultPartitioner (the Java one) computed them before KafkaJS was removed: an
    // independent reference, not the client under test.
    const java: Record<string, number> = { 'tx-0': 1, 'tx-1': 0, 'tx-2': 0, 'tx-3': 1, 'tx-4': 0, 'tx-5': 1, 'tx-6': 0, 'tx-7': 1, 'tx-8': 1, 'tx-9': 1, 'tx-2999': 2 }
    for (const [key, partition] of Object.entries(java)) expect(partitionOf.get(key), key).toBe(partition)
  })
})
