import { Admin, type BaseOptions } from '@platformatic/kafka'
import { requireConnection, type Kafka } from '../kafka-client.ts'
import { baseOptions } from './connection.ts'

/**
 * The options of a @platformatic/kafka client (Admin, Producer, Consumer) on the
 * cluster of `kafka`: brokers, client id (+ `clientIdSuffix`), TLS/SASL,
 * timeouts, this library's retry delays, no topic auto-creation. For tools and
 * tests that need a client this library does not wrap.
 */
export function clientOptions(kafka: Kafka, clientIdSuffix = ''): BaseOptions {
  return baseOptions(requireConnection(kafka, 'clientOptions'), clientIdSuffix)
}

/** A @platformatic/kafka Admin on the cluster of `kafka` (close it with `close()`). */
export function createKafkaAdmin(kafka: Kafka, clientIdSuffix = '-admin'): Admin {
  return new Admin(baseOptions(requireConnection(kafka, 'createKafkaAdmin'), clientIdSuffix))
}
