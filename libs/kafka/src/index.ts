export { createKafka, kafkaConnectionOf } from './kafka-client.ts'
/** The connection handle createKafka returns (a plain description of the cluster): passed to this library's clients. */
export type { Kafka, KafkaClientConfig, KafkaConnectionInfo } from './kafka-client.ts'
export { clientOptions, createKafkaAdmin } from './platformatic/clients.ts'
export { EOS_DEFAULTS } from './platformatic/eos-options.ts'
export { platformaticSecurityOptions } from './platformatic/connection.ts'
export { createReplayingGroupMember, REPLAYING_MEMBER_DEFAULTS } from './platformatic/replaying-group-member.ts'
export type { ReplayBatch, ReplayingGroupMember, ReplayingGroupMemberOptions } from './platformatic/replaying-group-member.ts'
export * from './kafka-security.ts'
export { SILENT_LOGGER } from './logger.ts'
export type { KafkaLogger } from './logger.ts'
export { DEFAULT_PARTITIONS, TOPIC_CATALOG, TOPICS, topicCatalog, topicSpec } from './topic-catalog.ts'
export type { CatalogOptions, CleanupPolicy, TopicName, TopicSpec } from './topic-catalog.ts'
export { ensureTopics } from './ensure-topics.ts'
export { TOPIC_REPLICATION_VARIABLES, topicReplicationFromEnv } from './topic-replication.ts'
export type { ReplicationFinding, TopicReplication } from './topic-replication.ts'
export type { EnsureTopicsOptions, EnsureTopicsReport } from './ensure-topics.ts'
export { checkRegistryTransport, createSchemaRegistry, isRegistryUnavailable, registerSubjectSchema } from './schema-registry.ts'
export type { RegisterOptions, SchemaRegistryConfig } from './schema-registry.ts'
export {
  AvroSerde,
  CONFLUENT_MAGIC_BYTE,
  confluentFrame,
  confluentUnframe,
  InvalidEventError,
} from './avro-serde.ts'
export type { AvroSerdeOptions, TopicCodec } from './avro-serde.ts'
export { SplicingEncoder, type SpliceField } from './avro-splice.ts'
export {
  buildDlqHeaders,
  createDlqRecord,
  DLQ_HEADERS,
  DLQ_MESSAGE_MAX_CHARS,
  dlqReason,
  readDlqHeaders,
} from './dlq-record.ts'
export type { DlqFailure, DlqRecord, DlqRecordOptions, DlqSource } from './dlq-record.ts'
export { maskRecordValue } from './pan-masking.ts'
export type { WriterSchemaLookup } from './pan-masking.ts'
export { backoffDelay, DEFAULT_RETRY_POLICY, resolveRetryPolicy } from './retry-policy.ts'
export { abortableDelay } from './abortable-delay.ts'
export type { RetryPolicy } from './retry-policy.ts'
export { createTransactionalPipeline, runTransactionalPipeline } from './transactional-pipeline.ts'
export type { TransactionalPipeline } from './transactional-pipeline.ts'
export { isRecordFailure } from './pipeline-options.ts'
export type { PipelineConsumerSettings, TransactionalPipelineOptions } from './pipeline-options.ts'
export type {
  AbortedEvent,
  CommittedEvent,
  DeadLetterEvent,
  OffsetOutOfRangeEvent,
  OutputRecord,
  PausedEvent,
  PipelineHooks,
  PipelineRecord,
  PipelineStatus,
  RecordHeaders,
  TopicPartition,
  Transform,
  TransformResult,
  TransformContext,
} from './pipeline-types.ts'
export { isFencedError } from './fencing.ts'
export { scanTopic } from './topic-scan.ts'
export type { ScannedMessage, TopicScanOptions, TopicScanResult } from './topic-scan.ts'
export { createTransactionalWriter, DEFAULT_TRANSACTION_TIMEOUT_MS } from './platformatic/transactional-writer.ts'
export type {
  TransactionalWriter,
  TransactionalWriterOptions,
  TransactionScope,
} from './platformatic/transactional-writer.ts'
export { createRecordProducer } from './platformatic/record-producer.ts'
export type { RecordProducer, RecordProducerOptions } from './platformatic/record-producer.ts'
export type { OutgoingMessage } from './platformatic/send-plan.ts'
export {
  KafkaConfigError,
  KafkaLibError,
  PipelineStoppedError,
  ProducerClosedError,
  ProducerFencedError,
  SchemaRegistrationError,
  SchemaRegistryUnavailableError,
  TopicConfigMismatchError,
  TopicScanTimeoutError,
  UnderReplicatedTopicError,
  UNDECODABLE_CODES,
  UndecodableRecordError,
} from './errors.ts'
export type { UndecodableCode } from './errors.ts'
export { TopicReader } from './platformatic/topic-reader.ts'
export type { ReadBatch, ReadRecord, TopicReaderOptions } from './platformatic/topic-reader.ts'
export { OffsetReader } from './platformatic/offset-reader.ts'
export type { PartitionOffsets } from './platformatic/offset-reader.ts'
export { describeTopics } from './platformatic/topic-identity.ts'
export type { ClusterTopics, TopicIdentity } from './platformatic/topic-identity.ts'
export {
  extractRecordContext,
  installedTracer,
  KAFKA_TRACER,
  MESSAGING,
  RECORD_HEADERS_GETTER,
  RECORD_HEADERS_SETTER,
  withTraceContext,
} from './trace-context.ts'
