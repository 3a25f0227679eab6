/**
 * @platformatic/kafka 2.12.1's read_committed filter kept one aborted range per
 * producer, from the first offset the broker listed to that producer's LAST abort
 * marker in the answer. A transaction that added a partition and wrote nothing
 * to it before it aborted (a send that failed after AddPartitionsToTxn, as in a
 * broker failover) leaves an abort marker the broker lists no aborted data for,
 * so every committed record between an earlier aborted transaction and that
 * marker vanished from the fetch answer. Found after a rolling restart of the
 * three-broker cluster: hundreds of committed enriched records were invisible
 * to every reader on this client. patches/@platformatic+kafka+2.12.1.patch puts in
 * the Java consumer's rule; this fails without it.
 */
import { Consumer, FetchIsolationLevels, IS_CONTROL, Producer } from '@platformatic/kafka'
import { scanTopic } from '@tep/kafka'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createKafkaTestKit, uniqueName } from '../support/kafka-test-kit.ts'

const kit = createKafkaTestKit()
const brokers = inject('kafkaBrokers')
const closers: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const close of closers) await close().catch(() => {})
  await kit.disconnectAll()
})

/** One producer on partition 0: `t1 aborted`, `t2 committed`, an aborted transaction with no data here, `t4 committed`. */
async function writeShape(topic: string): Promise<void> {
  const producer = new Producer({ clientId: uniqueName('shape'), bootstrapBrokers: brokers, transactionalId: uniqueName('shape-tx'), idempotent: true, acks: -1, retries: 3 })
  closers.push(() => producer.close())
  const send = async (value: string, commit: boolean) => {
    const tx = await producer.beginTransaction()
    await tx.send({ messages: [{ topic, partition: 0, key: Buffer.from('k'), value: Buffer.from(value) }] })
    await (commit ? tx.commit() : tx.abort())
  }
  await send('t1 aborted', false)
  await send('t2 committed', true)
  // The partition joins the transaction (AddPartitionsToTxn), no record reaches it, the transaction aborts: an abort marker without listed data.
  const tx = await producer.beginTransaction()
  await tx.addPartitions(await producer.metadata({ topics: [topic] }), [{ topic, partition: 0, key: Buffer.from('k'), value: Buffer.from('never sent') }])
  await tx.abort()
  await send('t4 committed', true)
}

describe('read_committed on @platformatic/kafka', () => {
  it('keeps committed records that sit between two aborted transactions of one producer', async () => {
    const topic = uniqueName('aborted-shape')
    await kit.createTopics([topic], 1)
    await writeShape(topic)

    // The client's own Fetch, as every reader of the project calls it.
    const consumer = new Consumer({ clientId: uniqueName('raw-fetch'), groupId: uniqueName('unused'), bootstrapBrokers: brokers })
    closers.push(() => consumer.close(true))
    const metadata = await consumer.metadata({ topics: [topic], forceUpdate: true })
    const t = metadata.topics.get(topic)!
    const response = await consumer.fetch({
      node: t.partitions[0]!.leader,
      topics: [{ topicId: t.id, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1_048_576, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }] }],
      isolationLevel: FetchIsolationLevels.READ_COMMITTED,
      maxWaitTime: 500,
      minBytes: 1,
      maxBytes: 1_048_576,
    })
    const answer = response.responses[0]!.partitions[0]!
    expect(answer.abortedTransactions?.length).toBeGreaterThan(0)
    const values = (answer.records ?? [])
      .filter((b) => (b.attributes & IS_CONTROL) === 0)
      .flatMap((b) => b.records.map((r) => r.value?.toString() ?? ''))
    expect(values).toEqual(['t2 committed', 't4 committed'])

    // And the project's groupless reader on top of it.
    const scanned: string[] = []
    await scanTopic({ kafka: kit.kafka, topic, onMessage: async (m) => void scanned.push(m.value?.toString('utf8') ?? '') })
    expect(scanned).toEqual(['t2 committed', 't4 committed'])
  })
})
