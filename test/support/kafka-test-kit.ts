/**
 * What every integration test needs from Kafka, sized for one shared single-node
 * broker: unique names, explicit topic creation, a read-committed collector, and
 * one call that disconnects every client the test made.
 *
 *   const kit = createKafkaTestKit()
 *   afterAll(() => kit.disconnectAll())
 *   const topic = uniqueName('orders')
 *   await kit.createTopics([topic], 3)
 *   const messages = await kit.collect(topic, 2)
 */
import { randomBytes } from 'node:crypto'
import { createKafka } from '@tep/kafka'
import {
  Partitioners,
  type Kafka,
  type Admin,
  type Consumer,
  type ConsumerConfig,
  type IHeaders,
  type Producer,
  type ProducerConfig,
} from 'kafkajs'
import { inject } from 'vitest'

/** `prefix-<time>-<random>`: unique per call, sortable, safe as a topic, group or transactional id. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`
}

/**
 * Consumer timings for tests: the broker's minimum session timeout is 6 s, and
 * short fetch waits keep latency low; KafkaJS's defaults (30 s session, 5 s fetch
 * wait) would make every test slow.
 */
export const TEST_CONSUMER_DEFAULTS = {
  sessionTimeout: 10_000,
  heartbeatInterval: 1_000,
  maxWaitTimeInMs: 200,
  allowAutoTopicCreation: false,
} as const satisfies Partial<ConsumerConfig>

export interface CollectedMessage {
  topic: string
  partition: number
  offset: string
  key: Buffer | null
  value: Buffer | null
  headers: IHeaders
}

export interface CollectOptions {
  /** Default 30 s. */
  timeoutMs?: number
  /** Default: read committed (aborted transactional records are never returned). */
  readUncommitted?: boolean
}

export interface KafkaTestKit {
  /** A KafkaJS client for the injected brokers, logLevel WARN. */
  readonly kafka: Kafka
  admin(): Admin
  /** Java-compatible partitioner, idempotent (a retried request never duplicates test input); bounded retries so a test against a dead broker fails instead of hanging. */
  producer(config?: ProducerConfig): Producer
  /** Needs a `groupId`; test timings filled in unless given. */
  consumer(config: ConsumerConfig): Consumer
  /** Creates the topics (the broker's replication factor) and waits until each partition has a leader. */
  createTopics(names: string[], partitions?: number, configEntries?: Record<string, string>): Promise<void>
  /**
   * Reads `topic` from the beginning with a fresh consumer group and resolves with
   * the first `count` messages (in arrival order; ordered per partition). Rejects
   * with what did arrive when the count is not reached in time.
   */
  collect(topic: string, count: number, options?: CollectOptions): Promise<CollectedMessage[]>
  /** Disconnects every client made through this kit; safe to call more than once. */
  disconnectAll(): Promise<void>
}

export function createKafkaTestKit(clientId: string = uniqueName('test')): KafkaTestKit {
  // createKafka (KafkaJS, warnings only) so that library functions built on
  // @platformatic/kafka (scanTopic, TopicReader) find the connection settings too.
  const kafka = createKafka({ clientId, brokers: inject('kafkaBrokers'), logLevel: 'warn' })
  const clients = new Set<{ disconnect(): Promise<void> }>()
  const track = <T extends { disconnect(): Promise<void> }>(client: T): T => {
    clients.add(client)
    return client
  }

  const kit: KafkaTestKit = {
    kafka,
    admin: () => track(kafka.admin()),
    producer: (config = {}) =>
      track(
        kafka.producer({
          createPartitioner: Partitioners.DefaultPartitioner,
          allowAutoTopicCreation: false,
          retry: { retries: 5 },
          // Idempotent by default: KafkaJS retries a whole produce request when one
          // partition in it fails or its response is lost, and a plain producer then
          // writes test input twice, which a test reads as the code under test
          // duplicating records (test/kafka/lost-produce-response-*.test.ts).
          idempotent: true,
          maxInFlightRequests: 1,
          ...config,
        }),
      ),
    consumer: (config) => track(kafka.consumer({ ...TEST_CONSUMER_DEFAULTS, ...config })),

    async createTopics(names, partitions = 1, configEntries = {}) {
      const admin = kit.admin()
      await admin.connect()
      try {
        const entries = Object.entries(configEntries).map(([name, value]) => ({ name, value }))
        await admin.createTopics({
          // KafkaJS's own wait fails on UNKNOWN_TOPIC_OR_PARTITION instead of retrying; the loop below waits.
          waitForLeaders: false,
          topics: names.map((topic) => ({
            topic,
            numPartitions: partitions,
            replicationFactor: -1,
            configEntries: entries,
          })),
        })
        // A loaded (or fresh) broker can still call a just-created topic unknown
        // (which KafkaJS's waitForLeaders does not retry); producers would then fail
        // with "does not host this topic-partition". Wait until metadata shows a
        // leader for every partition.
        const deadline = Date.now() + 30_000
        for (;;) {
          const meta = await admin.fetchTopicMetadata({ topics: names }).catch(() => undefined)
          const ready = meta !== undefined && names.every((n) => {
            const t = meta.topics.find((x) => x.name === n)
            return t !== undefined && t.partitions.length === partitions && t.partitions.every((p) => p.leader >= 0)
          })
          if (ready) break
          if (Date.now() > deadline) throw new Error(`topics ${names.join(', ')} have no leader for every partition after 30 s`)
          await new Promise((r) => setTimeout(r, 100))
        }
      } finally {
        await admin.disconnect()
        clients.delete(admin)
      }
    },

    async collect(topic, count, options = {}) {
      const timeoutMs = options.timeoutMs ?? 30_000
      const consumer = kit.consumer({
        groupId: uniqueName(`collect-${topic}`),
        readUncommitted: options.readUncommitted ?? false,
      })
      const received: CollectedMessage[] = []
      try {
        await consumer.connect()
        await consumer.subscribe({ topic, fromBeginning: true })
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => {
            const got = received.map((m) => `${m.partition}@${m.offset}`).join(', ')
            reject(
              new Error(
                `received ${received.length} of ${count} messages from ${topic} within ${timeoutMs} ms: [${got}]`,
              ),
            )
          }, timeoutMs)
          consumer.on(consumer.events.CRASH, ({ payload }) => {
            clearTimeout(timer)
            reject(
              new Error(`collector on ${topic} crashed: ${payload.error.message}`, { cause: payload.error }),
            )
          })
          if (count === 0) {
            clearTimeout(timer)
            resolve()
            return
          }
          consumer
            .run({
              eachMessage: async ({ topic: t, partition, message }) => {
                if (received.length >= count) return
                received.push({
                  topic: t,
                  partition,
                  offset: message.offset,
                  key: message.key,
                  value: message.value,
                  headers: message.headers ?? {},
                })
                if (received.length === count) {
                  clearTimeout(timer)
                  resolve()
                }
              },
            })
            .catch((err: unknown) => {
              clearTimeout(timer)
              reject(err)
            })
        })
        return received
      } finally {
        await consumer.disconnect()
        clients.delete(consumer)
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
