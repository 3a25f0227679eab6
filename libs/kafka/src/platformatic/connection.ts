import { Connection, Producer, type BaseOptions, type SASLMechanismValue } from '@platformatic/kafka'
import { isIP } from 'node:net'
import type { KafkaSecurity } from '../kafka-security.ts'
import { hasProtocolError } from './protocol-errors.ts'

/** What a @platformatic/kafka client needs to reach the cluster; kept by createKafka. */
export interface KafkaConnection {
  brokers: string[]
  clientId: string
  security?: KafkaSecurity
  connectionTimeoutMs?: number
  requestTimeoutMs?: number
}

const SASL_MECHANISMS: Record<NonNullable<KafkaSecurity['sasl']>['mechanism'], SASLMechanismValue> = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
}

/**
 * Delay before @platformatic/kafka retries a request. Its default is a flat
 * 1,000 ms, and right after a transaction commits the broker answers the next
 * transaction's first AddPartitionsToTxn/Produce with CONCURRENT_TRANSACTIONS
 * until the commit markers are written (a few ms): with the default every
 * transaction paid up to a second (5-7k ev/s exactly-once against 42-56k with
 * 5-20 ms, measured in docs/DECISIONS.md, issue 11). 5 ms × 2^attempt, capped
 * at 1 s (the client's first retry is attempt 1: 10 ms), about 4.3 s over the 10
 * retries. CONCURRENT_TRANSACTIONS waits 2, 4 and 8 ms on its first three retries,
 * then as any other answer: it is usually the broker still writing the markers of
 * the transaction just committed, a few ms, and at 10 ms the first retry cost the
 * exactly-once loop under full load about 10 ms of a 20 ms transaction whenever it
 * came (the Java client shortens its backoff to 20 ms for the same answer). It can
 * also last seconds (InitProducerId while the coordinator aborts a transaction whose
 * partition leader is down), so the later retries keep the whole budget.
 */
export function retryDelay(_client: unknown, _operation: string, attempt: number, _retries?: number, error?: unknown): number {
  if (attempt >= 1 && attempt <= 3 && error !== undefined && hasProtocolError(error, 'CONCURRENT_TRANSACTIONS')) return 2 ** attempt
  return Math.min(1_000, 5 * 2 ** Math.max(0, attempt))
}

/** Retries of one request: with `retryDelay` about 5 s in all before the error surfaces. */
export const REQUEST_RETRIES = 10

/**
 * How long a replicated cluster takes to replace a broker that died: the controller
 * fences it after `broker.session.timeout.ms` (9 s by default), elects new leaders for
 * its partitions (and so new transaction and group coordinators) at once, and a
 * client learns them from its next metadata request. 20 s leaves room for a loaded
 * controller. Measured in docs/DECISIONS.md ("Failover without the dead broker").
 */
export const BROKER_FAILOVER_MS = 20_000

/** Retries whose `retryDelay`s add up to at least `ms` (the first retry is attempt 1). */
export function retriesCovering(ms: number): number {
  let total = 0
  let retries = 0
  while (total < ms) total += retryDelay(undefined, 'any', ++retries)
  return retries
}

/**
 * Retries of a request of the exactly-once loop's consumer (its fetches above all):
 * enough to outlast a broker failover. With REQUEST_RETRIES a fetch from a killed
 * leader gave up after about 5 s, before its partitions had a new leader, and the
 * client failed the whole stream (`fetch failed 11 times`): the loop then re-created
 * its consumer, gave up every partition, waited up to 5 s to leave the group through
 * the dead coordinator, rejoined and redid its work. Each retry refreshes the
 * metadata, so once the controller has moved the partitions the fetch goes to the
 * new leader. (Once the dead broker is fenced and leaves the metadata, @platformatic/kafka
 * 2.12.1 fails a fetch still aimed at it without a retry, "Cannot find broker with node
 * id"; our patch of its message stream then regroups the partitions by their current
 * leaders: docs/upstream/platformatic-kafka-fetch-to-a-fenced-leader.md.)
 */
export const FAILOVER_RETRIES = retriesCovering(BROKER_FAILOVER_MS)

/** Base options of every @platformatic/kafka client this library creates. */
export function baseOptions(connection: KafkaConnection, clientIdSuffix = ''): BaseOptions {
  const options: BaseOptions = {
    clientId: `${connection.clientId}${clientIdSuffix}`,
    bootstrapBrokers: connection.brokers,
    retries: REQUEST_RETRIES,
    retryDelay,
    autocreateTopics: false,
  }
  if (connection.connectionTimeoutMs !== undefined) options.connectTimeout = connection.connectionTimeoutMs
  if (connection.requestTimeoutMs !== undefined) options.requestTimeout = connection.requestTimeoutMs
  Object.assign(options, platformaticSecurityOptions(connection))
  return options
}

/**
 * TLS (with SNI) and SASL of a @platformatic/kafka client or bare Connection. Unlike
 * KafkaJS, @platformatic/kafka sends no SNI unless told (`tlsServerName`): a broker
 * behind an SNI-routing proxy or a cloud endpoint would get none. KAFKA_SSL_SERVER_NAME
 * (`tls.servername`) is passed with the TLS options; otherwise each broker's host is
 * sent, unless the bootstrap brokers are IP addresses (SNI allows no IP address).
 */
export function platformaticSecurityOptions(connection: KafkaConnection): Pick<BaseOptions, 'tls' | 'tlsServerName' | 'sasl'> {
  const options: Pick<BaseOptions, 'tls' | 'tlsServerName' | 'sasl'> = {}
  const { tls, sasl } = connection.security ?? {}
  if (tls !== undefined) {
    options.tls = tls === true ? {} : { ...tls }
    const hosts = connection.brokers.map((b) => b.slice(0, b.lastIndexOf(':')).replace(/^\[|\]$/g, ''))
    if ((tls === true || tls.servername === undefined) && hosts.every((h) => isIP(h) === 0)) options.tlsServerName = true
  }
  if (sasl !== undefined)
    options.sasl = { mechanism: SASL_MECHANISMS[sasl.mechanism], username: sasl.username, password: sasl.password }
  return options
}

/** The instance's transactional producer (idempotent, acks all). */
export function newTransactionalProducer(
  connection: KafkaConnection,
  transactionalId: string,
  transactionTimeoutMs: number,
): Producer<Buffer, Buffer, Buffer, Buffer> {
  return new Producer({
    ...baseOptions(connection, '-txn'),
    transactionalId,
    idempotent: true,
    acks: -1,
    // InitProducerId's transaction timeout is the client's `timeout`.
    timeout: transactionTimeoutMs,
  })
}

/**
 * InitProducerId now: it aborts whatever a previous process with this id left open.
 * -1/-1 ("no producer yet"): @platformatic/kafka 2.12.1 sends 0/0 by default,
 * which the coordinator takes for a stale epoch of an existing transactional id
 * and refuses (INVALID_PRODUCER_EPOCH), so a restarted instance could never start.
 */
export async function initTransactions(producer: Producer<Buffer, Buffer, Buffer, Buffer>): Promise<void> {
  const probe = await producer.beginTransaction({ producerId: -1n, producerEpoch: -1 })
  await probe.cancel()
}

/** Options of a bare protocol Connection (requests the clients do not offer), with the cluster's TLS and SASL. */
export function connectionOptions(connection: KafkaConnection): NonNullable<ConstructorParameters<typeof Connection>[1]> {
  const options: NonNullable<ConstructorParameters<typeof Connection>[1]> = { ...platformaticSecurityOptions(connection) }
  if (connection.connectionTimeoutMs !== undefined) options.connectTimeout = connection.connectionTimeoutMs
  if (connection.requestTimeoutMs !== undefined) options.requestTimeout = connection.requestTimeoutMs
  return options
}

/**
 * A bare protocol Connection (requests the clients do not offer) with the cluster's
 * TLS and SASL. A socket error is also an `'error'` event of the Connection, which
 * without a listener ends the process (seen when the coordinator it talked to was
 * killed in the cluster fault rows); the request in flight fails with the same
 * error, so the listener only has to keep the event from being unhandled.
 */
export function bareConnection(name: string, connection: KafkaConnection): Connection {
  const conn = new Connection(name, connectionOptions(connection))
  conn.on('error', () => undefined)
  return conn
}
