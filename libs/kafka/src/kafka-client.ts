import {
  Kafka,
  logLevel,
  Partitioners,
  type KafkaConfig,
  type ProducerConfig,
} from 'kafkajs'
import { KafkaConfigError } from './errors.ts'
import { pinoLogCreator, SILENT_LOGGER, type KafkaLogger } from './logger.ts'
import { kafkaSecurityFromEnv, toKafkaJsSecurity, type KafkaSecurity } from './kafka-security.ts'
import { installReadCommittedFix } from './read-committed-fix.ts'

export interface KafkaClientConfig {
  /** host:port list. */
  brokers: string[]
  clientId: string
  connectionTimeoutMs?: number
  requestTimeoutMs?: number
  /** KafkaJS log level routed to the logger; default INFO. */
  logLevel?: 'error' | 'warn' | 'info' | 'debug'
  /** Retry of KafkaJS requests (not of records); KafkaJS defaults otherwise. */
  retry?: KafkaConfig['retry']
  /**
   * TLS and SASL, the one way to pass them: they reach the KafkaJS client and every
   * @platformatic/kafka client made from it (the data path). Unset, they are read
   * from the KAFKA_SECURITY_PROTOCOL/SASL/SSL variables (kafkaSecurityFromEnv), so
   * every service, tool and child process honours them. (KafkaJS-style `ssl`/`sasl`
   * options are gone: they secured the KafkaJS admin only and left the data path in
   * plaintext.)
   */
  security?: KafkaSecurity
}

/**
 * How a `Kafka` made by createKafka was configured: the @platformatic/kafka
 * clients of this library (the exactly-once loop, writers, readers, ensureTopics)
 * are built from it.
 */
export interface KafkaConnectionInfo {
  brokers: string[]
  clientId: string
  security?: KafkaSecurity
  connectionTimeoutMs?: number
  requestTimeoutMs?: number
}

const connections = new WeakMap<Kafka, KafkaConnectionInfo>()

/** The settings `kafka` was created with; undefined for a KafkaJS client not made by createKafka. */
export function kafkaConnectionOf(kafka: Kafka): KafkaConnectionInfo | undefined {
  return connections.get(kafka)
}

/** The settings `kafka` was created with; `what` (the caller's name) is refused a client not made by createKafka. */
export function requireConnection(kafka: Kafka, what: string): KafkaConnectionInfo {
  const connection = connections.get(kafka)
  if (connection === undefined)
    throw new KafkaConfigError(`${what} needs a Kafka client made by createKafka (its brokers and security are read from it)`)
  return connection
}

const LEVELS = {
  error: logLevel.ERROR,
  warn: logLevel.WARN,
  info: logLevel.INFO,
  debug: logLevel.DEBUG,
} as const

/**
 * Creates a KafkaJS client whose logs go to `logger`. It is also the connection
 * handle of this library's @platformatic/kafka clients (kafkaConnectionOf);
 * admin, producers and consumers made from it directly are KafkaJS.
 */
export function createKafka(config: KafkaClientConfig, logger: KafkaLogger = SILENT_LOGGER): Kafka {
  if (config.brokers.length === 0) {
    throw new KafkaConfigError('createKafka needs at least one broker (host:port), got an empty list')
  }
  const bad = config.brokers.filter((b) => !/^[^\s:]+:\d+$/.test(b))
  if (bad.length > 0) {
    throw new KafkaConfigError(
      `brokers must be host:port, got ${bad.map((b) => JSON.stringify(b)).join(', ')}`,
    )
  }
  if (config.clientId.length === 0) throw new KafkaConfigError('createKafka needs a non-empty clientId')
  // KafkaJS's own read-committed filter can let aborted records through.
  installReadCommittedFix()
  if ('ssl' in config || 'sasl' in config) {
    throw new KafkaConfigError(
      'createKafka takes TLS and SASL as `security` (a KafkaSecurity, e.g. kafkaSecurityFromEnv()), not `ssl`/`sasl`: those would not reach the @platformatic/kafka clients',
    )
  }
  const security = config.security ?? kafkaSecurityFromEnv()
  // Accepted only with KAFKA_ALLOW_INSECURE=true; said on every start so it is never forgotten.
  for (const what of security.insecure ?? []) logger.warn({ clientId: config.clientId }, `INSECURE Kafka setting accepted (KAFKA_ALLOW_INSECURE=true): ${what}`)
  const kafkajs = toKafkaJsSecurity(security)
  const kafka = new Kafka({
    brokers: config.brokers,
    clientId: config.clientId,
    ssl: kafkajs.ssl,
    sasl: kafkajs.sasl,
    connectionTimeout: config.connectionTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    retry: config.retry,
    logLevel: LEVELS[config.logLevel ?? 'info'],
    logCreator: pinoLogCreator(logger),
  })
  const info: KafkaConnectionInfo = {
    brokers: [...config.brokers],
    clientId: config.clientId,
  }
  if (security.tls !== undefined || security.sasl !== undefined) info.security = security
  if (config.connectionTimeoutMs !== undefined) info.connectionTimeoutMs = config.connectionTimeoutMs
  if (config.requestTimeoutMs !== undefined) info.requestTimeoutMs = config.requestTimeoutMs
  connections.set(kafka, info)
  return kafka
}

/**
 * Producer settings every producer of this project uses: the Java-compatible
 * murmur2 partitioner (so keys land where Java/Kafka Streams clients put them)
 * and no topic auto-creation (topics come from the catalog).
 */
export const PRODUCER_DEFAULTS = {
  createPartitioner: Partitioners.DefaultPartitioner,
  allowAutoTopicCreation: false,
} as const satisfies ProducerConfig

/** Settings of a transactional producer (idempotent, one request in flight, as KafkaJS requires). */
export function transactionalProducerConfig(
  transactionalId: string,
  overrides: Pick<ProducerConfig, 'transactionTimeout' | 'retry'> = {},
): ProducerConfig {
  return {
    ...PRODUCER_DEFAULTS,
    transactionalId,
    idempotent: true,
    maxInFlightRequests: 1,
    transactionTimeout: overrides.transactionTimeout ?? 60_000,
    ...(overrides.retry === undefined ? {} : { retry: overrides.retry }),
  }
}
