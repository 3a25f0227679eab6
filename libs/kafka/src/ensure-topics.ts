import kafkajs, { type Admin } from 'kafkajs'
import { TopicConfigMismatchError } from './errors.ts'
import { SILENT_LOGGER, type KafkaLogger } from './logger.ts'
import type { TopicSpec } from './topic-catalog.ts'

// kafkajs is CommonJS and Node's ESM loader does not detect this export by name.
const { ConfigResourceTypes } = kafkajs

export interface EnsureTopicsOptions {
  /** Replication factor of created topics; default 1 only suits single-broker development, production passes 3. */
  replicationFactor?: number
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
}

/**
 * Makes the topics of `catalog` exist, idempotently and safely for concurrent
 * callers: creates the missing ones (waiting for leaders), then checks every
 * topic's partition count and cleanup.policy. Those two cannot be corrected in
 * place without breaking key-to-partition placement or retention semantics, so a
 * difference is an error naming each topic, the expected and the actual value.
 */
export async function ensureTopics(
  admin: Admin,
  catalog: readonly TopicSpec[],
  options: EnsureTopicsOptions = {},
): Promise<EnsureTopicsReport> {
  const logger = options.logger ?? SILENT_LOGGER
  const replicationFactor = options.replicationFactor ?? 1
  const existingBefore = new Set(await admin.listTopics())
  const missing = catalog.filter((t) => !existingBefore.has(t.name))
  const created: string[] = []
  if (missing.length > 0) {
    // KafkaJS treats TOPIC_ALREADY_EXISTS for every topic as "nothing created",
    // so a concurrent creator elsewhere is not an error here. Its wait for leaders
    // gives up when a loaded broker does not list the new topic yet; the wait
    // below covers that.
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((t) => ({
          topic: t.name,
          numPartitions: t.partitions,
          replicationFactor,
          configEntries: Object.entries({ ...t.configs, 'cleanup.policy': t.cleanupPolicy }).map(
            ([name, value]) => ({ name, value }),
          ),
        })),
      })
    } catch (err) {
      if (!isMetadataNotReady(err)) throw err
    }
    created.push(...missing.map((t) => t.name))
    logger.info({ topics: created }, 'created Kafka topics')
  }

  // Right after a creation (ours or a concurrent instance's) the metadata may not
  // have reached every broker yet; wait for it rather than failing start-up.
  const { metadata, described } = await untilTopicsKnown(options.metadataTimeoutMs ?? 30_000, async () => ({
    metadata: withLeaders(await admin.fetchTopicMetadata({ topics: catalog.map((t) => t.name) })),
    described: await admin.describeConfigs({
      includeSynonyms: false,
      resources: catalog.map((t) => ({
        type: ConfigResourceTypes.TOPIC,
        name: t.name,
        configNames: ['cleanup.policy', ...Object.keys(t.configs)],
      })),
    }),
  }))
  const partitionsByTopic = new Map(metadata.topics.map((t) => [t.name, t.partitions.length]))
  const configsByTopic = new Map(
    described.resources.map((r) => [
      r.resourceName,
      new Map(r.configEntries.map((e) => [e.configName, e.configValue])),
    ]),
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
    const configs = configsByTopic.get(spec.name) ?? new Map<string, string>()
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
  return { created, existing: catalog.map((t) => t.name).filter((n) => existingBefore.has(n)), drift }
}

const METADATA_NOT_READY = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
])

function isMetadataNotReady(err: unknown): boolean {
  // KafkaJS may wrap the protocol error once its own retries are spent.
  const e = err as { type?: unknown; cause?: { type?: unknown } } | null
  const type = e?.type ?? e?.cause?.type
  return typeof type === 'string' && METADATA_NOT_READY.has(type)
}

/** The metadata, or a LEADER_NOT_AVAILABLE-typed error while some partition has no leader yet. */
function withLeaders<
  M extends { topics: { name: string; partitions: { partitionId: number; leader: number }[] }[] },
>(metadata: M): M {
  const leaderless = metadata.topics.flatMap((t) =>
    t.partitions.filter((p) => p.leader < 0).map((p) => `${t.name}/${p.partitionId}`),
  )
  if (leaderless.length > 0) {
    throw Object.assign(new Error(`partitions without a leader yet: ${leaderless.join(', ')}`), {
      type: 'LEADER_NOT_AVAILABLE',
    })
  }
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
