/**
 * What every integration test needs from Kafka, sized for one shared single-node
 * broker: unique names, explicit topic creation, a read-committed collector, and
 * one call that disconnects every client the test made.
 *
 *   const kit = createKafkaTestKit()
 *   afterAll(() => kit.disconnectAll())
 *   const topic = uniqueName('orders')
 *   await kit.createTopics([topic], 3)
 *   await kit.producer().send({ topic, messages: [{ key: 'k', value: 'v' }] })
 *   const messages = await kit.collect(topic, 2)
 *
 * Everything runs on @platformatic/kafka through @tep/kafka (the project has no
 * other Kafka client); the producer and admin keep the call shapes the tests
 * were written against (`send({ topic, messages })`, `transaction()`,
 * `fetchTopicOffsets`, `fetchOffsets`), offsets as strings.
 */
import { randomBytes } from 'node:crypto'
import {
  Consumer,
  compatibilityPartitioner,
  type Message,
  Producer,
} from '@platformatic/kafka'
import {
  clientOptions,
  createKafka,
  createKafkaAdmin,
  createRecordProducer,
  OffsetReader,
  TopicReader,
  type Kafka,
  type OutgoingMessage,
  type ReadRecord,
  type RecordHeaders,
} from '@tep/kafka'
import { inject } from 'vitest'

/** `prefix-<time>-<random>`: unique per call, sortable, safe as a topic, group or transactional id. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`
}

export interface CollectedMessage {
  topic: string
  partition: number
  offset: string
  key: Buffer | null
  value: Buffer | null
  headers: RecordHeaders
}

export interface CollectOptions {
  /** Default 30 s. */
  timeoutMs?: number
  /** Default: read committed (aborted transactional records are never returned). */
  readUncommitted?: boolean
}

/** A record to write: strings are UTF-8; no key and no partition spreads the records over the partitions in turn. */
export interface TestMessage {
  key?: string | Buffer | null
  value: string | Buffer | null
  partition?: number
  headers?: Record<string, string | Buffer>
  /** CreateTime, ms since the epoch as a string (as KafkaJS took it); default: now. */
  timestamp?: string
}

export interface TestRecord {
  topic: string
  messages: TestMessage[]
}

export interface TestProducerConfig {
  /** Makes the producer transactional (`transaction()`); a second producer with it fences the first. */
  transactionalId?: string
  /** Broker-side limit of one transaction, ms; default 60 000. */
  transactionTimeout?: number
  /** Accepted for the callers written for KafkaJS; every kit producer is idempotent (acks all, one copy on retry). */
  idempotent?: boolean
  maxInFlightRequests?: number
}

export interface TestTransaction {
  send(record: TestRecord): Promise<void>
  /** Commits consumer-group offsets (the next offset to read) with the transaction, as a member outside the group would. */
  sendOffsets(offsets: {
    consumerGroupId: string
    topics: { topic: string; partitions: { partition: number; offset: string }[] }[]
  }): Promise<void>
  commit(): Promise<void>
  abort(): Promise<void>
}

export interface TestProducer {
  /** Nothing to do (kept for the callers): the producer connects on first use. */
  connect(): Promise<void>
  /** Writes the records, in order, acknowledged by all in-sync replicas. */
  send(record: TestRecord): Promise<void>
  /** Begins a transaction (needs `transactionalId`). */
  transaction(): Promise<TestTransaction>
  disconnect(): Promise<void>
}

/** Offsets of one partition as strings (the shape the tests compare). */
export interface TestPartitionOffsets {
  partition: number
  /** Same as `high`. */
  offset: string
  /** Last stable offset: the end a read-committed reader reads to. */
  high: string
  low: string
}

/** The admin requests the tests use, on @platformatic/kafka. */
export interface TestAdmin {
  connect(): Promise<void>
  disconnect(): Promise<void>
  listTopics(): Promise<string[]>
  deleteTopics(options: { topics: string[] }): Promise<void>
  fetchTopicMetadata(options: { topics: string[] }): Promise<{
    topics: { name: string; partitions: { partitionId: number; leader: number; replicas: number[]; isr: number[] }[] }[]
  }>
  fetchTopicOffsets(topic: string): Promise<TestPartitionOffsets[]>
  /** Committed offsets of the group, every partition of each topic ('-1' where none). */
  fetchOffsets(options: { groupId: string; topics: string[] }): Promise<
    { topic: string; partitions: { partition: number; offset: string }[] }[]
  >
  describeGroups(groupIds: string[]): Promise<{ groups: { groupId: string; state: string; members: { memberId: string }[] }[] }>
  /** Moves each partition's log start to `offset`, removing the records before it: what retention does to old records. */
  deleteRecords(topic: string, partitions: { partition: number; offset: bigint }[]): Promise<void>
  /** Deletes empty groups and their committed offsets: what the broker does when a group's offsets expire. */
  deleteGroups(groupIds: string[]): Promise<void>
}

export interface KafkaTestKit {
  /** The connection handle (createKafka) for the injected brokers: pass it to @tep/kafka. */
  readonly kafka: Kafka
  admin(): TestAdmin
  /** Idempotent (a retried request never duplicates test input), Java-compatible partitioning; transactional with `transactionalId`. */
  producer(config?: TestProducerConfig): TestProducer
  /** Creates the topics (the broker's replication factor) and waits until each partition has a leader. */
  createTopics(names: string[], partitions?: number, configEntries?: Record<string, string>): Promise<void>
  /**
   * Reads `topic` from the beginning and resolves with the first `count`
   * messages (ordered per partition). Rejects with what did arrive when the
   * count is not reached in time.
   */
  collect(topic: string, count: number, options?: CollectOptions): Promise<CollectedMessage[]>
  /** Disconnects every client made through this kit; safe to call more than once. */
  disconnectAll(): Promise<void>
}

const bytes = (v: string | Buffer): Buffer => (typeof v === 'string' ? Buffer.from(v) : v)

function toOutgoing(messages: TestMessage[]): OutgoingMessage[] {
  return messages.map((m) => {
    const out: OutgoingMessage = { key: m.key ?? null, value: m.value === null ? null : bytes(m.value) }
    if (m.partition !== undefined) out.partition = m.partition
    if (m.headers !== undefined) out.headers = m.headers
    return out
  })
}

/** A read record in the kit's shape (headers by name; a repeated header becomes an array). */
export function collected(topic: string, partition: number, r: ReadRecord): CollectedMessage {
  const headers: RecordHeaders = {}
  for (const [k, v] of r.headers) {
    if (k === null || v === null) continue
    const name = k.toString('utf8')
    const seen = headers[name]
    headers[name] = seen === undefined ? v : Array.isArray(seen) ? [...seen, v] : [seen, v]
  }
  return { topic, partition, offset: r.offset.toString(), key: r.key, value: r.value, headers }
}

type RawProducer = Producer<Buffer, Buffer, Buffer, Buffer>

/**
 * `record` in @platformatic/kafka's produce shape. Keyed records go where the Java
 * client puts them (compatibilityPartitioner at send); records with neither key
 * nor partition take the topic's partitions in turn, as KafkaJS did (the
 * partitioner alone would put them all in partition 0).
 */
async function toWire(producer: RawProducer, record: TestRecord, roundRobin: Map<string, number>) {
  const metadata = await producer.metadata({ topics: [record.topic] })
  const count = metadata.topics.get(record.topic)?.partitionsCount ?? 1
  return record.messages.map((m) => {
    let partition = m.partition
    if (partition === undefined && (m.key === undefined || m.key === null)) {
      const turn = roundRobin.get(record.topic) ?? 0
      roundRobin.set(record.topic, turn + 1)
      partition = turn % count
    }
    const headers = m.headers === undefined ? undefined : new Map(Object.entries(m.headers).map(([k, v]) => [Buffer.from(k), bytes(v)]))
    return {
      topic: record.topic,
      ...(m.key === undefined || m.key === null ? {} : { key: bytes(m.key) }),
      ...(m.value === null ? {} : { value: bytes(m.value) }),
      ...(partition === undefined ? {} : { partition }),
      ...(headers === undefined ? {} : { headers }),
      ...(m.timestamp === undefined ? {} : { timestamp: BigInt(m.timestamp) }),
    }
  })
}

/** A plain producer: @tep/kafka's RecordProducer, or a bare idempotent client for records with their own timestamps. */
function plainProducer(kafka: Kafka): TestProducer {
  const producer = createRecordProducer(kafka)
  let raw: RawProducer | undefined
  const roundRobin = new Map<string, number>()
  return {
    connect: async () => {},
    async send(record) {
      if (record.messages.every((m) => m.timestamp === undefined)) return producer.send(record.topic, toOutgoing(record.messages))
      raw ??= new Producer({ ...clientOptions(kafka, '-test-producer'), idempotent: true, acks: -1 })
      await raw.send({ messages: await toWire(raw, record, roundRobin), partitioner: compatibilityPartitioner })
    },
    transaction: () => Promise.reject(new Error('transaction() needs a kit producer with a transactionalId')),
    async disconnect() {
      await Promise.allSettled([producer.close(), raw?.close()])
    },
  }
}

/** A transactional producer with KafkaJS's `transaction()` shape, on @platformatic/kafka. */
function transactionalProducer(kafka: Kafka, transactionalId: string, timeoutMs: number): TestProducer {
  const producer: RawProducer = new Producer({
    ...clientOptions(kafka, '-test-txn'),
    transactionalId,
    idempotent: true,
    acks: -1,
    timeout: timeoutMs,
  })
  let initialised: Promise<void> | undefined
  const roundRobin = new Map<string, number>()
  const consumers: Consumer<Buffer, Buffer, Buffer, Buffer>[] = []
  // InitProducerId with -1/-1 ("no producer yet"): 2.12.1 sends 0/0 by default, which the
  // coordinator refuses for an id used before (see @tep/kafka's connection.ts).
  const init = () =>
    (initialised ??= (async () => {
      const probe = await producer.beginTransaction({ producerId: -1n, producerEpoch: -1 })
      await probe.cancel()
    })())
  const wire = (record: TestRecord) => toWire(producer, record, roundRobin)
  return {
    connect: async () => {
      await init()
    },
    send: () => Promise.reject(new Error('a transactional kit producer sends in transaction() only')),
    async transaction() {
      await init()
      const tx = await producer.beginTransaction()
      return {
        async send(record) {
          await tx.send({ messages: await wire(record), partitioner: compatibilityPartitioner })
        },
        async sendOffsets({ consumerGroupId, topics }) {
          // AddOffsetsToTxn for the group, then TxnOffsetCommit as a member outside it
          // (generation -1, no member id), as KafkaJS's sendOffsets did.
          const consumer = new Consumer<Buffer, Buffer, Buffer, Buffer>({ ...clientOptions(kafka, '-test-offsets'), groupId: consumerGroupId })
          consumers.push(consumer)
          const coordinatorId = await consumer.findGroupCoordinator()
          await tx.addConsumer(consumer)
          const groupMember = { groupId: consumerGroupId, generationId: -1, memberId: '', coordinatorId }
          for (const { topic, partitions } of topics)
            for (const p of partitions)
              await tx.addOffset({ topic, partition: p.partition, offset: BigInt(p.offset) - 1n, metadata: { consumer: groupMember } } as unknown as Message)
        },
        commit: () => tx.commit(),
        abort: () => tx.abort(),
      }
    },
    async disconnect() {
      await Promise.allSettled([producer.close(), ...consumers.map((c) => c.close(true))])
    },
  }
}

/** What the work of `withTransaction` may do inside the transaction. */
export interface TestTransactionScope {
  send(topic: string, messages: TestMessage[]): Promise<void>
}

/**
 * Runs `work` inside one transaction of `producer` (a kit producer with a
 * transactionalId): commits when `work` resolves, aborts and rethrows when it
 * throws. (The production code's equivalent is @tep/kafka's createTransactionalWriter.)
 */
export async function withTransaction<T>(producer: TestProducer, work: (tx: TestTransactionScope) => Promise<T>): Promise<T> {
  const tx = await producer.transaction()
  let result: T
  try {
    result = await work({ send: (topic, messages) => tx.send({ topic, messages }) })
  } catch (err) {
    await tx.abort().catch(() => undefined)
    throw err
  }
  await tx.commit()
  return result
}

function admin(kafka: Kafka): TestAdmin {
  const client = createKafkaAdmin(kafka, '-test-admin')
  const offsets = new OffsetReader(kafka)
  return {
    connect: async () => {},
    async disconnect() {
      await Promise.allSettled([client.close(), offsets.close()])
    },
    listTopics: () => client.listTopics(),
    deleteTopics: (options) => client.deleteTopics(options),
    async fetchTopicMetadata({ topics }) {
      const metadata = await client.metadata({ topics, forceUpdate: true })
      return {
        topics: topics.flatMap((name) => {
          const t = metadata.topics.get(name)
          if (t === undefined) return []
          return [{ name, partitions: t.partitions.map((p, partitionId) => ({ partitionId, leader: p.leader, replicas: [...p.replicas], isr: [...p.isr] })) }]
        }),
      }
    },
    async fetchTopicOffsets(topic) {
      return (await offsets.topicOffsets(topic, { readCommitted: true })).map((p) => ({
        partition: p.partition,
        offset: p.high.toString(),
        high: p.high.toString(),
        low: p.low.toString(),
      }))
    },
    async fetchOffsets({ groupId, topics }) {
      const metadata = await client.metadata({ topics })
      return Promise.all(
        topics.map(async (topic) => {
          const committed = await offsets.committedOffsets(groupId, topic)
          const count = metadata.topics.get(topic)?.partitionsCount ?? 0
          return {
            topic,
            partitions: Array.from({ length: count }, (_, partition) => ({ partition, offset: (committed.get(partition) ?? -1n).toString() })),
          }
        }),
      )
    },
    async deleteRecords(topic, partitions) {
      await client.deleteRecords({ topics: [{ name: topic, partitions }] })
    },
    async deleteGroups(groupIds) {
      await client.deleteGroups({ groups: groupIds })
    },
    async describeGroups(groupIds) {
      const described = await client.describeGroups({ groups: groupIds })
      return {
        groups: groupIds.map((groupId) => {
          const g = described.get(groupId)
          return {
            groupId,
            state: g?.state ?? 'Dead',
            members: [...(g?.members.keys() ?? [])].map((memberId) => ({ memberId })),
          }
        }),
      }
    },
  }
}

export function createKafkaTestKit(clientId: string = uniqueName('test')): KafkaTestKit {
  const kafka = createKafka({ clientId, brokers: inject('kafkaBrokers'), logLevel: 'warn' })
  const clients = new Set<{ disconnect(): Promise<void> }>()
  const track = <T extends { disconnect(): Promise<void> }>(client: T): T => {
    clients.add(client)
    return client
  }

  const kit: KafkaTestKit = {
    kafka,
    admin: () => track(admin(kafka)),
    producer: (config = {}) => {
      if (config.transactionalId !== undefined)
        return track(transactionalProducer(kafka, config.transactionalId, config.transactionTimeout ?? 60_000))
      return track(plainProducer(kafka))
    },

    async createTopics(names, partitions = 1, configEntries = {}) {
      const client = createKafkaAdmin(kafka, '-test-admin')
      try {
        const configs = Object.entries(configEntries).map(([name, value]) => ({ name, value }))
        await client.createTopics({ topics: names, partitions, replicas: -1, configs })
        // A loaded (or fresh) broker can still call a just-created topic unknown;
        // producers would then fail with "does not host this topic-partition".
        // Wait until metadata shows a leader for every partition.
        const deadline = Date.now() + 30_000
        for (;;) {
          const meta = await client.metadata({ topics: names, forceUpdate: true }).catch(() => undefined)
          const ready =
            meta !== undefined &&
            names.every((n) => {
              const t = meta.topics.get(n)
              return t !== undefined && t.partitions.length === partitions && t.partitions.every((p) => p.leader >= 0)
            })
          if (ready) break
          if (Date.now() > deadline) throw new Error(`topics ${names.join(', ')} have no leader for every partition after 30 s`)
          await new Promise((r) => setTimeout(r, 100))
        }
      } finally {
        await client.close().catch(() => {})
      }
    },

    async collect(topic, count, options = {}) {
      const timeoutMs = options.timeoutMs ?? 30_000
      const received: CollectedMessage[] = []
      if (count === 0) return received
      let resolve!: () => void
      const enough = new Promise<void>((r) => (resolve = r))
      const reader = new TopicReader({
        kafka,
        topics: [topic],
        follow: true,
        maxWaitMs: 200,
        ...(options.readUncommitted === true ? { readUncommitted: true } : {}),
        onRecords: (batch) => {
          for (const r of batch.records) {
            if (received.length >= count) break
            received.push(collected(topic, batch.partition, r))
          }
          if (received.length >= count) resolve()
        },
      })
      let timer: NodeJS.Timeout | undefined
      try {
        await reader.start()
        await Promise.race([
          enough,
          reader.done().then(() => {
            throw new Error(`collector on ${topic} ended before ${count} messages arrived`)
          }),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              const got = received.map((m) => `${m.partition}@${m.offset}`).join(', ')
              reject(new Error(`received ${received.length} of ${count} messages from ${topic} within ${timeoutMs} ms: [${got}]`))
            }, timeoutMs)
          }),
        ])
        return received
      } finally {
        clearTimeout(timer)
        await reader.stop()
      }
    },

    async disconnectAll() {
      const all = [...clients]
      clients.clear()
      await Promise.allSettled(all.map((c) => c.disconnect()))
    },
  }
  return kit
}
