/**
 * Partition shapes that read_committed filters have got wrong, written with two
 * transactional producers. KafkaJS 2.2.4 entered the broker's aborted
 * transactions in first-offset order although the broker lists them in abort
 * order (interleaved aborts leaked); @platformatic/kafka 2.12.1 keeps one
 * aborted range per producer (a producer's earlier aborted transaction leaked).
 */
import type { KafkaTestKit, TestProducer as Producer } from '../support/kafka-test-kit.ts'

export interface AbortingProducers {
  a: Producer
  b: Producer
}

/** Two connected transactional producers, `<topic>-a` and `<topic>-b`, tracked by the kit. */
export async function abortingProducers(kit: KafkaTestKit, topic: string): Promise<AbortingProducers> {
  const a = kit.producer({ transactionalId: `${topic}-a`, transactionTimeout: 10_000 })
  const b = kit.producer({ transactionalId: `${topic}-b`, transactionTimeout: 10_000 })
  await Promise.all([a.connect(), b.connect()])
  return { a, b }
}

/**
 * B begins first, A aborts first, so the broker lists A's aborted transaction
 * before B's: `b0 aborted`, `a0 aborted`, `b1 aborted` on partition 0 (keys `a`, `b`).
 */
export async function writeInterleavedAborts(topic: string, { a, b }: AbortingProducers): Promise<void> {
  const txB = await b.transaction()
  await txB.send({ topic, messages: [{ key: 'b', value: 'b0 aborted' }] })
  const txA = await a.transaction()
  await txA.send({ topic, messages: [{ key: 'a', value: 'a0 aborted' }] })
  await txA.abort()
  await txB.send({ topic, messages: [{ key: 'b', value: 'b1 aborted' }] })
  await txB.abort()
}

/** One producer, three transactions in a row: `a1 aborted`, `a2 committed`, `a3 aborted` (key `a`). */
export async function writeAbortedCommittedAborted(topic: string, producer: Producer): Promise<void> {
  for (const [value, commit] of [['a1 aborted', false], ['a2 committed', true], ['a3 aborted', false]] as const) {
    const tx = await producer.transaction()
    await tx.send({ topic, messages: [{ key: 'a', value }] })
    await (commit ? tx.commit() : tx.abort())
  }
}
