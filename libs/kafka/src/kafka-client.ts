import { KafkaConfigError } from './errors.ts'
import { SILENT_LOGGER, type KafkaLogger } from './logger.ts'
import { kafkaSecurityFromEnv, type KafkaSecurity } from './kafka-security.ts'

export interface KafkaClientConfig {
  /** host:port list. */
  brokers: string[]
  clientId: string
  connectionTimeoutMs?: number
  requestTimeoutMs?: number
  /**
   * Lowest level passed on to `logger` by `kafka.logger`, the default logger of
   * the clients made from the handle; default info.
   */
  logLevel?: 'error' | 'warn' | 'info' | 'debug'
  /**
   * TLS and SASL, the one way to pass them: every @platformatic/kafka client
   * made from the handle uses them. Unset, they are read from the
   * KAFKA_SECURITY_PROTOCOL/SASL/SSL variables (kafkaSecurityFromEnv), so every
   * service, tool and child process honours them.
   */
  security?: KafkaSecurity
}

/**
 * How to reach the cluster: what every @platformatic/kafka client of this
 * library (the exactly-once loop, writers, readers, admin) is built from.
 */
export interface KafkaConnectionInfo {
  brokers: string[]
  clientId: string
  security?: KafkaSecurity
  connectionTimeoutMs?: number
  requestTimeoutMs?: number
}

/**
 * The connection handle createKafka returns: a plain, immutable description of
 * the cluster (brokers, client id, TLS/SASL, timeouts) and the logger the
 * library's clients log to when given none. It opens nothing: each @tep/kafka
 * client made from it (createRecordProducer, createTransactionalWriter,
 * TopicReader, OffsetReader, createKafkaAdmin, the pipeline) has its own connections.
 */
export interface Kafka extends Readonly<KafkaConnectionInfo> {
  /** Default logger of the clients made from this handle (their own `logger` option wins), filtered to `logLevel`. */
  readonly logger: KafkaLogger
}

/** The connection settings of `kafka`; undefined when it is not a handle (no brokers or client id). */
export function kafkaConnectionOf(kafka: Kafka): KafkaConnectionInfo | undefined {
  const k = kafka as Partial<Kafka> | null | undefined
  if (k === null || typeof k !== 'object') return undefined
  if (!Array.isArray(k.brokers) || k.brokers.length === 0 || typeof k.clientId !== 'string' || k.clientId === '') return undefined
  const info: KafkaConnectionInfo = { brokers: [...k.brokers], clientId: k.clientId }
  if (k.security !== undefined) info.security = k.security
  if (k.connectionTimeoutMs !== undefined) info.connectionTimeoutMs = k.connectionTimeoutMs
  if (k.requestTimeoutMs !== undefined) info.requestTimeoutMs = k.requestTimeoutMs
  return info
}

/** The settings of `kafka`; `what` (the caller's name) is refused anything that is not a handle made by createKafka. */
export function requireConnection(kafka: Kafka, what: string): KafkaConnectionInfo {
  const connection = kafkaConnectionOf(kafka)
  if (connection === undefined)
    throw new KafkaConfigError(`${what} needs a Kafka client made by createKafka (its brokers and security are read from it)`)
  return connection
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const

/** `logger` without the levels below `level`. */
function atLevel(logger: KafkaLogger, level: (typeof LEVELS)[number]): KafkaLogger {
  if (level === 'debug') return logger
  const min = LEVELS.indexOf(level)
  const pick = (l: (typeof LEVELS)[number]) => (LEVELS.indexOf(l) >= min ? logger[l].bind(logger) : () => {})
  return { debug: pick('debug'), info: pick('info'), warn: pick('warn'), error: pick('error') }
}

/**
 * Checks the settings and returns the connection handle (see `Kafka`); TLS and
 * SASL come from `security` or, unset, from the environment.
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
  if ('ssl' in config || 'sasl' in config) {
    throw new KafkaConfigError(
      'createKafka takes TLS and SASL as `security` (a KafkaSecurity, e.g. kafkaSecurityFromEnv()), not `ssl`/`sasl`',
    )
  }
  const security = config.security ?? kafkaSecurityFromEnv()
  // Accepted only with KAFKA_ALLOW_INSECURE=true; said on every start so it is never forgotten.
  for (const what of security.insecure ?? []) logger.warn({ clientId: config.clientId }, `INSECURE Kafka setting accepted (KAFKA_ALLOW_INSECURE=true): ${what}`)
  const kafka: { -readonly [K in keyof Kafka]: Kafka[K] } = {
    brokers: [...config.brokers],
    clientId: config.clientId,
    logger: atLevel(logger, config.logLevel ?? 'info'),
  }
  if (security.tls !== undefined || security.sasl !== undefined) kafka.security = security
  if (config.connectionTimeoutMs !== undefined) kafka.connectionTimeoutMs = config.connectionTimeoutMs
  if (config.requestTimeoutMs !== undefined) kafka.requestTimeoutMs = config.requestTimeoutMs
  return Object.freeze(kafka)
}
