import { Admin, ConfigResourceTypes, type ClusterMetadata } from '@platformatic/kafka'
import type { Kafka } from './kafka-client.ts'
import { TopicConfigMismatchError, UnderReplicatedTopicError } from './errors.ts'
import { requireConnection } from './kafka-client.ts'
import { baseOptions } from './platformatic/connection.ts'
import { hasProtocolError } from './platformatic/protocol-errors.ts'
import { SILENT_LOGGER, type KafkaLogger } from './logger.ts'
import type { TopicSpec } from './topic-catalog.ts'
import { minInsyncFor, replicationFindings, topicReplicationFromEnv, type ReplicationFinding } from './topic-replication.ts'

export interface EnsureTopicsOptions {
  /**
   * Replication factor of created topics, -1 for the broker's `default.replication.factor`.
   * Default: `KAFKA_REPLICATION_FACTOR`, else -1 (see topic-replication.ts).
   */
  replicationFactor?: number
  /** `min.insync.replicas` of created topics. Default: `KAFKA_MIN_INSYNC_REPLICAS`, else 2 for 3+ replicas. */
  minInsyncReplicas?: number
  /** An existing under-replicated topic: refuse (default) or warn (`KAFKA_ALLOW_UNDER_REPLICATED_TOPICS=true`). */
  underReplicated?: 'refuse' | 'warn'
  logger?: KafkaLogger
  /** How long to wait for new topics to appear in the cluster metadata; default 30 s. */
  metadataTimeoutMs?: number
}

export interface EnsureTopicsReport {
  created: string[]
  existing: string[]
  /**
   * Topic configs of existing topics that differ from the catalog but are safe
   * to leave (retention, compaction tuning); logged as warnings, not fixed, so an
   * operator's deliberate override is never reverted behind their back.
   */
  drift: { topic: string; config: string; expected: string; actual: string | null }[]
  /** Under-replicated topics that were accepted with a warning (`underReplicated: 'warn'`). */
  underReplicated: ReplicationFinding[]
  /** Replicas the topics are expected to have (the configured or the broker's default), when known. */
  expectedReplicas: number | undefined
}

/**
 * Makes the topics of `catalog` exist, idempotently and safely for concurrent
 * callers (a @platformatic/kafka Admin on the connection of `kafka`, a client
 * made by createKafka): creates the missing ones (waiting for leaders), then checks every
 * topic's partition count and cleanup.policy. Those two cannot be corrected in
 * place without breaking key-to-partition placement or retention semantics, so a
 * difference is an error naming each topic, the expected and the actual value.
 * Replication is checked too: a topic with fewer replicas than configured (or
 * than the broker's default), or with min.insync.replicas < 2 on a cluster of
 * three or more brokers, is refused (`TOPIC_UNDER_REPLICATED`) unless
 * `underReplicated: 'warn'`; DECISIONS.md says why refuse is the default.
 */
export async function ensureTopics(
  kafka: Kafka,
  catalog: readonly TopicSpec[],
  options: EnsureTopicsOptions = {},
): Promise<EnsureTopicsReport> {
  const connection = requireConnection(kafka, 'ensureTopics')
  const admin = new Admin(baseOptions(connection, '-admin'))
  try {
    const logger = options.logger ?? kafka.logger
    return await ensureWith(admin, catalog, logger === undefined ? options : { ...options, logger })
  } finally {
    await admin.close().catch(() => {})
  }
}

async function ensureWith(
  admin: Admin,
  catalog: readonly TopicSpec[],
  options: EnsureTopicsOptions,
): Promise<EnsureTopicsReport> {
  const logger = options.logger ?? SILENT_LOGGER
  const fromEnv = topicReplicationFromEnv()
  const replicationFactor = options.replicationFactor ?? fromEnv.replicationFactor
  const configuredMinIsr = options.minInsyncReplicas ?? fromEnv.minInsyncReplicas
  const onUnderReplicated = options.underReplicated ?? fromEnv.underReplicated
  const cluster = await admin.metadata({ topics: [] })
  const brokerCount = cluster.brokers.size
  const expectedReplicas = replicationFactor > 0 ? replicationFactor : await brokerDefaultReplication(admin, cluster)
  const minIsr = expectedReplicas === undefined ? configuredMinIsr : minInsyncFor(expectedReplicas, configuredMinIsr)
  const existingBefore = new Set(await admin.listTopics())
  const missing = catalog.filter((t) => !existingBefore.has(t.name))
  const created: string[] = []
  // One request per topic: the client applies a request's configs to all its topics.
  // A concurrent creator elsewhere (TOPIC_ALREADY_EXISTS) is not an error here.
  for (const t of missing) {
    try {
      await admin.createTopics({
        topics: [t.name],
        partitions: t.partitions,
        replicas: replicationFactor,
        configs: Object.entries({
          ...(minIsr === undefined ? {} : { 'min.insync.replicas': String(minIsr) }),
          ...t.configs,
          'cleanup.policy': t.cleanupPolicy,
        }).map(([name, value]) => ({ name, value })),
      })
      created.push(t.name)
    } catch (err) {
      if (!hasProtocolError(err, 'TOPIC_ALREADY_EXISTS')) throw err
    }
  }
  if (created.length > 0)
    logger.info({ topics: created, replicationFactor: expectedReplicas ?? replicationFactor, minInsyncReplicas: minIsr }, 'created Kafka topics')

  // Right after a creation (ours or a concurrent instance's) the metadata may not
  // have reached every broker yet, and partitions may have no leader: wait for it
  // rather than failing start-up.
  const names = catalog.map((t) => t.name)
  const { metadata, described } = await untilTopicsKnown(options.metadataTimeoutMs ?? 30_000, async () => ({
    metadata: withLeaders(await admin.metadata({ topics: names, forceUpdate: true })),
    described: await admin.describeConfigs({
      includeSynonyms: false,
      resources: catalog.map((t) => ({
        resourceType: ConfigResourceTypes.TOPIC,
        resourceName: t.name,
        configurationKeys: ['cleanup.policy', 'min.insync.replicas', ...Object.keys(t.configs)],
      })),
    }),
  }))
  const partitionsByTopic = new Map([...metadata.topics].map(([name, t]) => [name, t.partitionsCount]))
  const configsByTopic = new Map(
    described.map((r) => [r.resourceName, new Map(r.configs.map((e) => [e.name, e.value ?? null]))]),
  )

  const mismatches: string[] = []
  const drift: EnsureTopicsReport['drift'] = []
  for (const spec of catalog) {
    const partitions = partitionsByTopic.get(spec.name)
    if (partitions !== spec.partitions) {
      mismatches.push(
        `${spec.name} has ${partitions ?? 'no'} partitions, the catalog says ${spec.partitions}`,
      )
    }
    const configs = configsByTopic.get(spec.name) ?? new Map<string, string | null>()
    const policy = configs.get('cleanup.policy') ?? null
    if (policy !== spec.cleanupPolicy) {
      mismatches.push(
        `${spec.name} has cleanup.policy=${policy ?? '(unknown)'}, the catalog says ${spec.cleanupPolicy}`,
      )
    }
    for (const [config, expected] of Object.entries(spec.configs)) {
      const actual = configs.get(config) ?? null
      if (actual !== expected) drift.push({ topic: spec.name, config, expected, actual })
    }
  }
  if (mismatches.length > 0) {
    throw new TopicConfigMismatchError(
      `existing topics do not match the topic catalog: ${mismatches.join('; ')}. ` +
        'Partition count and cleanup policy cannot be changed in place safely; recreate the topic or migrate it deliberately.',
      { mismatches },
    )
  }
  if (drift.length > 0) logger.warn({ drift }, 'topic configs differ from the catalog (left as they are)')

  const findings = replicationFindings(
    catalog.map((spec) => {
      const partitions = metadata.topics.get(spec.name)?.partitions ?? []
      const isr = configsByTopic.get(spec.name)?.get('min.insync.replicas')
      return {
        topic: spec.name,
        minReplicas: Math.min(...partitions.map((p) => p.replicas.length)),
        minInsyncReplicas: isr === undefined || isr === null ? undefined : Number(isr),
      }
    }),
    expectedReplicas ?? 1,
    brokerCount,
  )
  if (findings.length > 0) {
    const text = findings.map((f) => f.problem).join('; ')
    if (onUnderReplicated === 'refuse') {
      throw new UnderReplicatedTopicError(
        `existing topics are under-replicated for this cluster: ${text}. A broker loss could stall or lose acknowledged records. ` +
          'Raise the replication (kafka-reassign-partitions, kafka-configs --alter min.insync.replicas) or set KAFKA_ALLOW_UNDER_REPLICATED_TOPICS=true to start anyway.',
        { findings, brokerCount, expectedReplicas },
      )
    }
    logger.warn({ findings, brokerCount, expectedReplicas }, `UNDER-REPLICATED TOPICS (allowed by KAFKA_ALLOW_UNDER_REPLICATED_TOPICS): ${text}`)
  }
  // A topic a concurrent creator made first counts as existing.
  return {
    created,
    existing: catalog.map((t) => t.name).filter((n) => !created.includes(n)),
    drift,
    underReplicated: findings,
    expectedReplicas,
  }
}

/** The cluster's `default.replication.factor`, read from one broker; undefined when the broker does not tell (ACLs). */
async function brokerDefaultReplication(admin: Admin, cluster: ClusterMetadata): Promise<number | undefined> {
  const brokerId = [...cluster.brokers.keys()][0]
  if (brokerId === undefined) return undefined
  try {
    const [described] = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [
        { resourceType: ConfigResourceTypes.BROKER, resourceName: String(brokerId), configurationKeys: ['default.replication.factor'] },
      ],
    })
    const value = described?.configs.find((c) => c.name === 'default.replication.factor')?.value
    const n = Number(value)
    return value === undefined || value === null || !Number.isInteger(n) || n < 1 ? undefined : n
  } catch {
    return undefined
  }
}

/** Topic metadata not everywhere yet (just created), or partitions without a leader. */
function isMetadataNotReady(err: unknown): boolean {
  return (
    (err as { notReady?: unknown } | null)?.notReady === true ||
    hasProtocolError(err, 'UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_OR_FOLLOWER', 'UNKNOWN_TOPIC_ID')
  )
}

/** The metadata, or a "not ready" error while some partition has no leader yet. */
function withLeaders(metadata: ClusterMetadata): ClusterMetadata {
  const leaderless = [...metadata.topics].flatMap(([name, t]) =>
    t.partitions.flatMap((p, partition) => (p.leader < 0 ? [`${name}/${partition}`] : [])),
  )
  if (leaderless.length > 0)
    throw Object.assign(new Error(`partitions without a leader yet: ${leaderless.join(', ')}`), { notReady: true })
  return metadata
}

async function untilTopicsKnown<T>(timeoutMs: number, read: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (let delay = 100; ; delay = Math.min(delay * 2, 2_000)) {
    try {
      return await read()
    } catch (err) {
      if (!isMetadataNotReady(err) || Date.now() + delay > deadline) throw err
    }
    await new Promise((resolve) => setTimeout(resolve, delay))
  }
}
