import { describe, expect, it } from 'vitest'
import { loaderEnv } from './loader-env.ts'

describe('the table loader child environment', () => {
  it('carries Kafka and registry access and the runtime, never the service secrets', () => {
    const env = loaderEnv({
      PATH: '/usr/bin',
      NODE_OPTIONS: '--max-semi-space-size=64',
      KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
      KAFKA_SASL_USERNAME: 'tep',
      KAFKA_SASL_PASSWORD_FILE: '/run/secrets/tep/kafka/KAFKA_SASL_PASSWORD',
      SCHEMA_REGISTRY_PASSWORD_FILE: '/run/secrets/tep/kafka/SCHEMA_REGISTRY_PASSWORD',
      ENRICHMENT_CLIENT_SECRET: 'enrichment-secret',
      ENRICHMENT_BASIC_PASSWORD: 'basic-password',
      TOKEN_ENCRYPTION_KEY: 'token-key',
      AWS_SECRET_ACCESS_KEY: 'cloud-secret',
    })
    expect(env).toEqual({
      PATH: '/usr/bin',
      NODE_OPTIONS: '--max-semi-space-size=64',
      KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
      KAFKA_SASL_USERNAME: 'tep',
      KAFKA_SASL_PASSWORD_FILE: '/run/secrets/tep/kafka/KAFKA_SASL_PASSWORD',
      SCHEMA_REGISTRY_PASSWORD_FILE: '/run/secrets/tep/kafka/SCHEMA_REGISTRY_PASSWORD',
    })
  })
})
