import { KafkaConfigError } from './errors.ts'

/**
 * Which Kafka client runs the exactly-once loop. `platformatic` (@platformatic/kafka)
 * is the default: its transactional offset commit carries the group generation
 * (KIP-447), so one transactional producer per instance is fenced correctly and
 * all assigned partitions share one transaction (see docs/DECISIONS.md).
 * `kafkajs` keeps the older per-partition-producer loop, selectable for comparison.
 */
export type KafkaClientKind = 'platformatic' | 'kafkajs'

export const KAFKA_CLIENTS: readonly KafkaClientKind[] = ['platformatic', 'kafkajs']
export const DEFAULT_KAFKA_CLIENT: KafkaClientKind = 'platformatic'

/** Parses a KAFKA_CLIENT value; undefined or empty gives the default. */
export function parseKafkaClient(value: string | undefined): KafkaClientKind {
  if (value === undefined || value === '') return DEFAULT_KAFKA_CLIENT
  if ((KAFKA_CLIENTS as readonly string[]).includes(value)) return value as KafkaClientKind
  throw new KafkaConfigError(
    `KAFKA_CLIENT must be one of ${KAFKA_CLIENTS.join(', ')}, got ${JSON.stringify(value)}`,
  )
}

/** Client-neutral TLS/SASL settings: defined with their environment parsing in kafka-security.ts. */
export type { KafkaSecurity } from './kafka-security.ts'
