/**
 * Broker configuration for a single-node KRaft cluster on loopback.
 *
 * The overrides matter: Kafka's defaults assume three brokers (internal topics with
 * replication factor 3 and min ISR 2 would leave consumer groups and transactions
 * stuck on one node), wait 3 s before the first rebalance, and auto-create topics,
 * which KafkaJS handles badly under KRaft. Topics must be created explicitly.
 */
export interface BrokerConfigInput {
  kafkaPort: number
  controllerPort: number
  dataDir: string
}

export function serverProperties({ kafkaPort, controllerPort, dataDir }: BrokerConfigInput): string {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${kafkaPort},CONTROLLER://127.0.0.1:${controllerPort}`,
    // 127.0.0.1, not localhost: localhost may resolve to ::1 first, where nothing listens.
    `advertised.listeners=PLAINTEXT://127.0.0.1:${kafkaPort}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${dataDir}`,
    'num.partitions=1',
    'default.replication.factor=1',
    'min.insync.replicas=1',
    'auto.create.topics.enable=false',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=1',
    'group.initial.rebalance.delay.ms=0',
    // Sized for a shared 2-core machine rather than a production box.
    'num.network.threads=2',
    'num.io.threads=2',
    'num.recovery.threads.per.data.dir=1',
    'log.cleaner.dedupe.buffer.size=33554432',
    '',
  ].join('\n')
}

/**
 * WARN everywhere except the one INFO line readiness waits for ("Kafka Server
 * started", from KafkaRaftServer); keeps the log small and the line easy to find.
 */
export function log4jProperties(): string {
  return [
    'log4j.rootLogger=WARN, stdout',
    'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
    'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
    'log4j.logger.kafka.server.KafkaRaftServer=INFO',
    '',
  ].join('\n')
}

/** The line KafkaRaftServer logs once the broker and controller are up. */
export const KAFKA_STARTED_LINE = 'Kafka Server started'
