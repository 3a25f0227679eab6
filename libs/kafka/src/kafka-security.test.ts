import { describe, expect, it } from 'vitest'
import { KafkaConfigError } from './errors.ts'
import { kafkaSecurityFromEnv, schemaRegistrySecurityFromEnv } from './kafka-security.ts'

const files: Record<string, string> = {
  '/etc/kafka/ca.pem': 'CA-PEM',
  '/etc/kafka/client.pem': 'CERT-PEM',
  '/etc/kafka/client.key': 'KEY-PEM',
  '/run/secrets/kafka-password': 'from-file\n',
}
const read = (path: string): string => {
  const text = files[path]
  if (text === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' })
  return text
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(KafkaConfigError)
    return (err as KafkaConfigError).details.problems as string[]
  }
  throw new Error('expected a KafkaConfigError')
}

describe('kafkaSecurityFromEnv', () => {
  it('is plaintext without variables', () => {
    expect(kafkaSecurityFromEnv({}, read)).toEqual({})
  })

  it('reads SASL_SSL with SCRAM-SHA-512, a private CA and a password file', () => {
    const security = kafkaSecurityFromEnv(
      {
        KAFKA_SECURITY_PROTOCOL: 'sasl_ssl',
        KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
        KAFKA_SASL_USERNAME: 'ingest',
        KAFKA_SASL_PASSWORD_FILE: '/run/secrets/kafka-password',
        KAFKA_SSL_CA_FILE: '/etc/kafka/ca.pem',
      },
      read,
    )
    expect(security).toEqual({
      tls: { ca: 'CA-PEM' },
      sasl: { mechanism: 'scram-sha-512', username: 'ingest', password: 'from-file' },
    })
  })

  it('reads SSL with the system CAs, mutual TLS and an SNI name', () => {
    expect(kafkaSecurityFromEnv({ KAFKA_SECURITY_PROTOCOL: 'SSL' }, read)).toEqual({ tls: true })
    expect(
      kafkaSecurityFromEnv(
        {
          KAFKA_SECURITY_PROTOCOL: 'SSL',
          KAFKA_SSL_CERT_FILE: '/etc/kafka/client.pem',
          KAFKA_SSL_KEY_FILE: '/etc/kafka/client.key',
          KAFKA_SSL_SERVER_NAME: 'kafka.internal.example',
        },
        read,
      ),
    ).toEqual({ tls: { cert: 'CERT-PEM', key: 'KEY-PEM', servername: 'kafka.internal.example' } })
    expect(problemsOf(() => kafkaSecurityFromEnv({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_SERVER_NAME: '10.0.0.1' }, read))[0]).toMatch(
      /KAFKA_SSL_SERVER_NAME must be a DNS host name/,
    )
  })

  const saslPlaintext = { KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT', KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }
  const noCertificateCheck = { KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_SSL_REJECT_UNAUTHORIZED: 'false' }

  it('refuses SASL_PLAINTEXT (PLAIN sends the password in clear) and an unchecked certificate without KAFKA_ALLOW_INSECURE', () => {
    expect(problemsOf(() => kafkaSecurityFromEnv(saslPlaintext, read))).toEqual([
      expect.stringMatching(/^KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT .*refused unless KAFKA_ALLOW_INSECURE=true/),
    ])
    expect(problemsOf(() => kafkaSecurityFromEnv({ ...saslPlaintext, KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512' }, read))).toHaveLength(1)
    expect(problemsOf(() => kafkaSecurityFromEnv(noCertificateCheck, read))).toEqual([
      expect.stringMatching(/^KAFKA_SSL_REJECT_UNAUTHORIZED=false .*refused unless KAFKA_ALLOW_INSECURE=true/),
    ])
    expect(problemsOf(() => kafkaSecurityFromEnv({ ...noCertificateCheck, KAFKA_ALLOW_INSECURE: 'false' }, read))).toHaveLength(1)
    expect(problemsOf(() => kafkaSecurityFromEnv({ KAFKA_ALLOW_INSECURE: 'yes please' }, read))).toEqual([
      'KAFKA_ALLOW_INSECURE must be true or false, got "yes please"',
    ])
  })

  it('accepts them with KAFKA_ALLOW_INSECURE=true, naming each so createKafka can warn', () => {
    const plain = kafkaSecurityFromEnv({ ...saslPlaintext, KAFKA_ALLOW_INSECURE: 'true' }, read)
    expect(plain.sasl).toEqual({ mechanism: 'plain', username: 'u', password: 'p' })
    expect(plain.insecure).toEqual([expect.stringMatching(/^KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT/)])
    const unchecked = kafkaSecurityFromEnv({ ...noCertificateCheck, KAFKA_ALLOW_INSECURE: 'true' }, read)
    expect(unchecked.tls).toEqual({ rejectUnauthorized: false })
    expect(unchecked.insecure).toEqual([expect.stringMatching(/^KAFKA_SSL_REJECT_UNAUTHORIZED=false/)])
    // The switch alone changes nothing about a secure setting.
    expect(kafkaSecurityFromEnv({ KAFKA_SECURITY_PROTOCOL: 'SSL', KAFKA_ALLOW_INSECURE: 'true' }, read)).toEqual({ tls: true })
  })

  it('reports every problem at once, by variable name, never a password', () => {
    const problems = problemsOf(() =>
      kafkaSecurityFromEnv(
        {
          KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
          KAFKA_SASL_MECHANISM: 'GSSAPI',
          KAFKA_SASL_PASSWORD: 'hunter2',
          KAFKA_SSL_CA_FILE: '/missing.pem',
          KAFKA_SSL_CERT_FILE: '/etc/kafka/client.pem',
          KAFKA_SSL_REJECT_UNAUTHORIZED: 'maybe',
        },
        read,
      ),
    )
    expect(problems).toEqual([
      'KAFKA_SSL_CA_FILE=/missing.pem cannot be read (ENOENT)',
      'KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together (mutual TLS needs both)',
      'KAFKA_SSL_REJECT_UNAUTHORIZED must be true or false, got "maybe"',
      'KAFKA_SASL_MECHANISM must be one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 with SASL_SSL, got "GSSAPI"',
      'KAFKA_SASL_USERNAME is required with SASL_SSL',
    ])
    expect(problems.join()).not.toContain('hunter2')
    expect(problemsOf(() => kafkaSecurityFromEnv({ KAFKA_SECURITY_PROTOCOL: 'TLS' }, read))[0]).toMatch(
      /^KAFKA_SECURITY_PROTOCOL must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL/,
    )
    // Half-configured security is refused rather than silently ignored.
    expect(problemsOf(() => kafkaSecurityFromEnv({ KAFKA_SASL_USERNAME: 'u' }, read))).toEqual([
      'KAFKA_SASL_* variables are set but KAFKA_SECURITY_PROTOCOL is PLAINTEXT; use SASL_PLAINTEXT or SASL_SSL',
    ])
    expect(
      problemsOf(() =>
        kafkaSecurityFromEnv(
          { KAFKA_SECURITY_PROTOCOL: 'SASL_SSL', KAFKA_SASL_MECHANISM: 'PLAIN', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p', KAFKA_SASL_PASSWORD_FILE: '/run/secrets/kafka-password' },
          read,
        ),
      ),
    ).toEqual(['set KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE, not both'])
  })
})

describe('schemaRegistrySecurityFromEnv', () => {
  it('gives basic auth when both are set, and refuses one without the other', () => {
    expect(schemaRegistrySecurityFromEnv({}, read)).toEqual({})
    expect(
      schemaRegistrySecurityFromEnv({ SCHEMA_REGISTRY_USERNAME: 'reg', SCHEMA_REGISTRY_PASSWORD: 'pw' }, read),
    ).toEqual({ auth: { username: 'reg', password: 'pw' } })
    expect(problemsOf(() => schemaRegistrySecurityFromEnv({ SCHEMA_REGISTRY_USERNAME: 'reg' }, read))).toEqual([
      'SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD go together',
    ])
  })
})
