/**
 * Producer settings for writing test INPUT. KafkaJS sends one produce request per
 * broker and, when any partition in it fails (or the response is lost), retries
 * the whole request. A plain producer then writes the partitions that had
 * already succeeded a second time, and a test reads that as the pipeline
 * duplicating records. Idempotence gives every batch a producer id and sequence
 * number, so the broker recognises the retry and keeps one copy.
 * KafkaJS allows idempotence only with one request in flight.
 */
import type { ProducerConfig } from 'kafkajs'

export const INPUT_PRODUCER_CONFIG = {
  idempotent: true,
  maxInFlightRequests: 1,
} as const satisfies ProducerConfig
