/**
 * Broker configuration for a KRaft cluster on loopback: one node (the default) or
 * several combined broker+controller nodes (`--brokers 3`).
 *
 * The overrides matter: Kafka's defaults assume three brokers (internal topics with
 * replication factor 3 and min ISR 2 would leave consumer groups and transactions
 * stuck on one node), wait 3 s before the first rebalance, and auto-create topics,
 * which clients handle badly under KRaft. Topics must be created explicitly.
 * With three or more nodes the cluster is configured as production clusters are:
 * replication factor 3 and min.insync.replicas 2 for every topic, the internal
 * ones included, and no unclean leader election.
 */
export interface BrokerConfigInput {
  /** This node's id, 1-based. Default 1. */
  nodeId?: number
  kafkaPort: number
  controllerPort: number
  dataDir: string
  /** Every node of the cluster (this one included): id, controller port and address (default 127.0.0.1). Default: this node alone. */
  voters?: Array<{ nodeId: number; controllerPort: number; host?: string }>
  /**
   * The address this node listens on and advertises. Default 127.0.0.1. The fault
   * suite gives every node its own address in its own network namespace, so that
   * a partition between two parties can be made with firewall rules.
   */
  host?: string
}

/** Replication settings the local cluster uses for `brokerCount` nodes. */
export function replicationFor(brokerCount: number): { replicationFactor: number; minInsyncReplicas: number } {
  const replicationFactor = Math.min(3, brokerCount)
  return { replicationFactor, minInsyncReplicas: replicationFactor >= 3 ? 2 : 1 }
}

export function serverProperties({ nodeId = 1, kafkaPort, controllerPort, dataDir, voters, host = '127.0.0.1' }: BrokerConfigInput): string {
  const quorum = voters ?? [{ nodeId, controllerPort, host }]
  const { replicationFactor, minInsyncReplicas } = replicationFor(quorum.length)
  const clustered = quorum.length > 1
  return [
    'process.roles=broker,controller',
    `node.id=${nodeId}`,
    `controller.quorum.voters=${quorum.map((v) => `${v.nodeId}@${v.host ?? '127.0.0.1'}:${v.controllerPort}`).join(',')}`,
    `listeners=PLAINTEXT://${host}:${kafkaPort},CONTROLLER://${host}:${controllerPort}`,
    // 127.0.0.1, not localhost: localhost may resolve to ::1 first, where nothing listens.
    `advertised.listeners=PLAINTEXT://${host}:${kafkaPort}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${dataDir}`,
    'num.partitions=1',
    `default.replication.factor=${replicationFactor}`,
    `min.insync.replicas=${minInsyncReplicas}`,
    'unclean.leader.election.enable=false',
    'auto.create.topics.enable=false',
    `offsets.topic.replication.factor=${replicationFactor}`,
    // Three partitions on a cluster, so that group and transaction coordinators can sit on different brokers.
    `offsets.topic.num.partitions=${clustered ? 3 : 1}`,
    `transaction.state.log.replication.factor=${replicationFactor}`,
    `transaction.state.log.min.isr=${minInsyncReplicas}`,
    `transaction.state.log.num.partitions=${clustered ? 3 : 1}`,
    'group.initial.rebalance.delay.ms=0',
    // Sized for a shared 2-core machine rather than a production box.
    'num.network.threads=2',
    'num.io.threads=2',
    `num.replica.fetchers=1`,
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
