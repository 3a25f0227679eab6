import { describe, expect, it } from 'vitest'
import { KafkaConfigError } from './errors.ts'
import { createKafka, kafkaConnectionOf, type KafkaClientConfig } from './kafka-client.ts'
import type { KafkaSecurity } from './kafka-security.ts'
import { platformaticSecurityOptions } from './platformatic/connection.ts'

function recordingLogger() {
  const warnings: string[] = []
  const none = () => {}
  return { warnings, logger: { debug: none, info: none, error: none, warn: (_obj: object, msg?: string) => warnings.push(msg ?? '') } }
}

const sasl = { mechanism: 'scram-sha-512', username: 'u', password: 'p' } as const

describe('createKafka security', () => {
  it('takes security one way only: `ssl`/`sasl` (which left the @platformatic/kafka data path in plaintext) are refused', () => {
    const config = { brokers: ['kafka:9093'], clientId: 't', ssl: true, sasl } as unknown as KafkaClientConfig
    expect(() => createKafka(config)).toThrow(KafkaConfigError)
    expect(() => createKafka(config)).toThrow(/`security`/)
  })

  it('hands the security to every @platformatic/kafka client made from the handle', () => {
    const security: KafkaSecurity = { tls: { ca: 'CA' }, sasl }
    const kafka = createKafka({ brokers: ['kafka:9093'], clientId: 't', security })
    expect(kafkaConnectionOf(kafka)?.security).toEqual(security)
    const options = platformaticSecurityOptions(kafkaConnectionOf(kafka)!)
    expect(options.tls).toEqual({ ca: 'CA' })
    expect(options.sasl).toEqual({ mechanism: 'SCRAM-SHA-512', username: 'u', password: 'p' })
  })

  it('warns on every start about each insecure setting accepted with KAFKA_ALLOW_INSECURE', () => {
    const { logger, warnings } = recordingLogger()
    const security: KafkaSecurity = { tls: { rejectUnauthorized: false }, insecure: ['KAFKA_SSL_REJECT_UNAUTHORIZED=false accepts any certificate'] }
    createKafka({ brokers: ['kafka:9093'], clientId: 't', security }, logger)
    createKafka({ brokers: ['kafka:9093'], clientId: 't', security }, logger)
    expect(warnings).toEqual([
      expect.stringMatching(/INSECURE.*KAFKA_SSL_REJECT_UNAUTHORIZED=false/),
      expect.stringMatching(/INSECURE.*KAFKA_SSL_REJECT_UNAUTHORIZED=false/),
    ])
    createKafka({ brokers: ['kafka:9093'], clientId: 't', security: { tls: true } }, logger)
    expect(warnings).toHaveLength(2)
  })
})

describe('SNI of the @platformatic/kafka clients', () => {
  const connection = (brokers: string[], tls: KafkaSecurity['tls']) => ({ brokers, clientId: 't', security: { tls } })

  it("sends each broker's host name (KafkaJS does so itself)", () => {
    expect(platformaticSecurityOptions(connection(['b1.kafka.example:9093', 'b2.kafka.example:9093'], true))).toEqual({ tls: {}, tlsServerName: true })
  })

  it('sends the configured name when KAFKA_SSL_SERVER_NAME gives one', () => {
    expect(platformaticSecurityOptions(connection(['10.0.0.5:9093'], { servername: 'kafka.example' }))).toEqual({ tls: { servername: 'kafka.example' } })
  })

  it('sends none to IP addresses (SNI allows no IP) nor without TLS', () => {
    expect(platformaticSecurityOptions(connection(['127.0.0.1:9093', '[::1]:9093'], true))).toEqual({ tls: {} })
    expect(platformaticSecurityOptions({ brokers: ['kafka:9092'], clientId: 't' })).toEqual({})
  })
})
