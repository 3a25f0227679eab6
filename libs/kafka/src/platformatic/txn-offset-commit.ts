import { txnOffsetCommitV3, type Connection, type Consumer, type Producer } from '@platformatic/kafka'
import type { InputMessage } from './input-message.ts'
import { bareConnection, retryDelay, type KafkaConnection } from './connection.ts'
import { liveGroupCoordinator } from './group-coordinator.ts'
import { hasProtocolError } from './protocol-errors.ts'

/** Answers worth asking again after a short delay; anything else fails the transaction (it is aborted and redone). */
const RETRIABLE = ['COORDINATOR_LOAD_IN_PROGRESS', 'COORDINATOR_NOT_AVAILABLE', 'NOT_COORDINATOR', 'CONCURRENT_TRANSACTIONS', 'REQUEST_TIMED_OUT']
const ATTEMPTS = 6

interface Generation {
  groupId: string
  generationId: number
  memberId: string
  coordinatorId: number
  topics: Map<string, InputMessage[]>
}

/**
 * The offsets of a transaction as one TxnOffsetCommit request per group
 * generation (normally one), with the generation and member id the records were
 * fetched under (KIP-447).
 *
 * @platformatic/kafka's `addOffset` sends one request per partition, and its
 * deduplication of concurrent calls answers them all with the first one's
 * result, so they had to go one after the other: with records of six
 * partitions in a transaction that was six round trips before EndTxn, on the
 * latency path of every record. The protocol takes every partition in one
 * request, as the Java client sends it.
 *
 * Keeps one connection to the group coordinator; AddOffsetsToTxn must have been
 * sent for the group in this transaction first (Transaction.addConsumer).
 */
export class TxnOffsetCommitter {
  readonly #connection: KafkaConnection
  #conn: Connection | undefined
  #address: string | undefined

  constructor(connection: KafkaConnection) {
    this.#connection = connection
  }

  async commit(producer: Producer, consumer: Consumer, transactionalId: string, lastRecords: InputMessage[]): Promise<void> {
    const producerId = producer.producerId
    const producerEpoch = producer.producerEpoch
    if (producerId === undefined || producerEpoch === undefined)
      throw new Error('the transactional producer has no producer id: InitProducerId has not completed')
    for (const g of byGeneration(lastRecords)) {
      const topics = [...g.topics].map(([name, messages]) => ({
        name,
        partitions: messages.map((m) => ({
          partitionIndex: m.partition,
          committedOffset: m.offset + 1n,
          committedLeaderEpoch: m.leaderEpoch ?? -1,
        })),
      }))
      let coordinatorId = g.coordinatorId
      for (let attempt = 0; ; attempt++) {
        try {
          const conn = await this.#coordinator(consumer, coordinatorId)
          await txnOffsetCommitV3.api.async(conn, transactionalId, g.groupId, producerId, producerEpoch, g.generationId, g.memberId, null, topics)
          break
        } catch (err) {
          const broken = isNetworkError(err)
          const moved = hasProtocolError(err, 'NOT_COORDINATOR', 'COORDINATOR_NOT_AVAILABLE') || err instanceof CoordinatorGoneError
          if (broken || moved) await this.close()
          if (attempt + 1 >= ATTEMPTS || !(broken || moved || hasProtocolError(err, ...RETRIABLE))) throw err
          await new Promise((resolve) => setTimeout(resolve, retryDelay(undefined, 'txnOffsetCommit', attempt)))
          // The records name the coordinator of their fetch. After a move, or when that broker
          // does not answer (killed: its successor takes over once the controller fences it),
          // find the live one (group-coordinator.ts); retrying the dead broker only failed the
          // transaction, and the redo named the same broker again.
          if (broken || moved) coordinatorId = await liveGroupCoordinator(consumer, this.#connection).then((c) => c.nodeId, () => consumer.findGroupCoordinator())
        }
      }
    }
  }

  async close(): Promise<void> {
    const conn = this.#conn
    this.#conn = undefined
    this.#address = undefined
    await conn?.close().catch(() => undefined)
  }

  async #coordinator(consumer: Consumer, coordinatorId: number): Promise<Connection> {
    const metadata = await consumer.metadata({ topics: [] })
    const broker = metadata.brokers.get(coordinatorId)
    if (broker === undefined) throw new CoordinatorGoneError(`group coordinator ${coordinatorId} is not in the cluster metadata`)
    const address = `${broker.host}:${broker.port}`
    if (this.#conn !== undefined && this.#address === address && this.#conn.isConnected()) return this.#conn
    await this.close()
    const conn = bareConnection(`${this.#connection.clientId}-txn-offsets`, this.#connection)
    await conn.connect(broker.host, broker.port)
    this.#conn = conn
    this.#address = address
    return conn
  }
}

/** The coordinator the records name has left the cluster metadata (a dead broker, fenced by the controller). */
class CoordinatorGoneError extends Error {}

function byGeneration(lastRecords: InputMessage[]): Generation[] {
  const groups = new Map<string, Generation>()
  for (const m of lastRecords) {
    const c = m.consumer
    const key = `${c.groupId}\u0000${c.generationId}\u0000${c.memberId}`
    let g = groups.get(key)
    if (g === undefined) {
      g = { ...c, topics: new Map() }
      groups.set(key, g)
    }
    const list = g.topics.get(m.topic) ?? []
    list.push(m)
    g.topics.set(m.topic, list)
  }
  return [...groups.values()]
}

function isNetworkError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return code === 'PLT_KFK_NETWORK' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNREFUSED' || code === 'PLT_KFK_TIMEOUT'
}
