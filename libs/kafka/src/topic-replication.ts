import { KafkaConfigError } from './errors.ts'

/**
 * How the services create and check their topics' replication, from the
 * environment (every service and tool reads the same variables, like the
 * security ones):
 *
 * - `KAFKA_REPLICATION_FACTOR`: replicas of created topics. Default `-1`, the
 *   broker's own `default.replication.factor` (KIP-464, Kafka 2.4+), so a
 *   cluster configured for 3 gets 3 and a development broker gets 1.
 * - `KAFKA_MIN_INSYNC_REPLICAS`: `min.insync.replicas` of created topics.
 *   Default: 2 when the topics get 3 or more replicas (Kafka's own default of 1
 *   would let an `acks=all` write succeed on a single copy), else the broker's.
 * - `KAFKA_ALLOW_UNDER_REPLICATED_TOPICS`: `true` turns the refusal of an
 *   existing under-replicated topic into a warning at every start.
 */
export interface TopicReplication {
  /** Positive, or -1 for the broker's default. */
  replicationFactor: number
  /** Set on created topics; undefined: 2 for 3+ replicas, else the broker's default. */
  minInsyncReplicas?: number
  /** What an existing topic with too few replicas or min.insync.replicas < 2 on a 3+ broker cluster does. */
  underReplicated: 'refuse' | 'warn'
}

export const TOPIC_REPLICATION_VARIABLES = {
  KAFKA_REPLICATION_FACTOR: "replicas of topics the service creates; -1 (default): the broker's default.replication.factor",
  KAFKA_MIN_INSYNC_REPLICAS: 'min.insync.replicas of topics the service creates (default: 2 when they get 3+ replicas)',
  KAFKA_ALLOW_UNDER_REPLICATED_TOPICS:
    'true: start with a warning when an existing topic has fewer replicas than configured or min.insync.replicas < 2 on 3+ brokers (default: refuse to start)',
} as const

type Env = Record<string, string | undefined>

export function topicReplicationFromEnv(env: Env = process.env): TopicReplication {
  const problems: string[] = []
  const int = (name: string, min: number): number | undefined => {
    const raw = env[name]?.trim()
    if (raw === undefined || raw === '') return undefined
    const n = Number(raw)
    if (!Number.isInteger(n) || (n < min && n !== -1) || n === 0) {
      problems.push(`${name} must be a whole number >= ${min}${name === 'KAFKA_REPLICATION_FACTOR' ? ' or -1' : ''}, got "${raw}"`)
      return undefined
    }
    return n
  }
  const replicationFactor = int('KAFKA_REPLICATION_FACTOR', 1) ?? -1
  const minInsyncReplicas = int('KAFKA_MIN_INSYNC_REPLICAS', 1)
  if (minInsyncReplicas === -1) problems.push('KAFKA_MIN_INSYNC_REPLICAS must be a whole number >= 1, got "-1"')
  const allowRaw = env['KAFKA_ALLOW_UNDER_REPLICATED_TOPICS']?.trim().toLowerCase()
  if (allowRaw !== undefined && allowRaw !== '' && allowRaw !== 'true' && allowRaw !== 'false') {
    problems.push(`KAFKA_ALLOW_UNDER_REPLICATED_TOPICS must be true or false, got "${allowRaw}"`)
  }
  if (replicationFactor > 0 && minInsyncReplicas !== undefined && minInsyncReplicas > replicationFactor) {
    problems.push(
      `KAFKA_MIN_INSYNC_REPLICAS (${minInsyncReplicas}) is above KAFKA_REPLICATION_FACTOR (${replicationFactor}): no write with acks=all could succeed`,
    )
  }
  if (problems.length > 0) throw new KafkaConfigError(`invalid topic replication settings: ${problems.join('; ')}`, { problems })
  return {
    replicationFactor,
    ...(minInsyncReplicas === undefined || minInsyncReplicas === -1 ? {} : { minInsyncReplicas }),
    underReplicated: allowRaw === 'true' ? 'warn' : 'refuse',
  }
}

/** The min.insync.replicas to set on a topic created with `replicas` replicas, or undefined to keep the broker's default. */
export function minInsyncFor(replicas: number, configured: number | undefined): number | undefined {
  if (configured !== undefined) return configured
  return replicas >= 3 ? 2 : undefined
}

export interface ReplicationFinding {
  topic: string
  problem: string
}

/**
 * What is unsafe about existing topics: fewer replicas than expected on some
 * partition, or min.insync.replicas below 2 on a cluster of 3+ brokers (one
 * broker loss then leaves acknowledged writes on a single copy).
 */
export function replicationFindings(
  topics: Array<{ topic: string; minReplicas: number; minInsyncReplicas: number | undefined }>,
  expectedReplicas: number,
  brokerCount: number,
): ReplicationFinding[] {
  const findings: ReplicationFinding[] = []
  for (const t of topics) {
    if (t.minReplicas < expectedReplicas) {
      findings.push({ topic: t.topic, problem: `${t.topic} has replication factor ${t.minReplicas}, expected ${expectedReplicas}` })
    }
    if (brokerCount >= 3 && t.minInsyncReplicas !== undefined && t.minInsyncReplicas < 2) {
      findings.push({
        topic: t.topic,
        problem: `${t.topic} has min.insync.replicas=${t.minInsyncReplicas} on a ${brokerCount}-broker cluster, expected at least 2`,
      })
    }
  }
  return findings
}
