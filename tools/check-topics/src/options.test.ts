import { describe, expect, it } from 'vitest'
import { DEFAULT_TOPICS, OptionsError, parseOptions, parseTime } from './options.ts'

describe('check-topics options', () => {
  it('defaults to the contract topics and the environment', () => {
    const o = parseOptions([], { KAFKA_BROKERS: 'k:1,k:2', SCHEMA_REGISTRY_URL: 'http://r/apis/ccompat/v7' })
    expect(o).toMatchObject({ brokers: ['k:1', 'k:2'], registryUrl: 'http://r/apis/ccompat/v7', topics: DEFAULT_TOPICS, window: undefined })
  })

  it('reads topics, window and codes', () => {
    const o = parseOptions(['--brokers', 'h:9', '--no-registry', '--raw', 'r', '--enriched', 'e', '--dlq', 'd', '--from', '2026-01-01T00:00:00Z', '--to', '1767225601000', '--record-codes', 'A,B'], {})
    expect(o).toMatchObject({ registryUrl: undefined, topics: { raw: 'r', enriched: 'e', dlq: 'd' }, window: { from: 1767225600000, to: 1767225601000 }, recordCodes: ['A', 'B'] })
  })

  it('refuses what it cannot use, naming the option', () => {
    expect(() => parseOptions(['--brokers', 'nohost'], {})).toThrow(/--brokers/)
    expect(() => parseOptions(['--from', 'yesterday-ish'], {})).toThrow(OptionsError)
    expect(() => parseOptions(['--from', '2026-02-01T00:00:00Z', '--to', '2026-01-01T00:00:00Z'], {})).toThrow(/after --to/)
    expect(() => parseOptions(['--bogus'], {})).toThrow(OptionsError)
  })

  it('reads durations as time ago', () => {
    expect(parseTime('30m', '--from', 10_000_000)).toBe(10_000_000 - 1_800_000)
  })

  it('reads the Kafka and registry security variables every service reads, and refuses what they refuse', () => {
    const o = parseOptions([], {
      KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
      KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
      KAFKA_SASL_USERNAME: 'u',
      KAFKA_SASL_PASSWORD: 'p',
      SCHEMA_REGISTRY_USERNAME: 'r',
      SCHEMA_REGISTRY_PASSWORD: 'rp',
    })
    if (o === 'help') throw new Error('unexpected help')
    expect(o.security).toEqual({ tls: true, sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' } })
    expect(o.registrySecurity).toEqual({ auth: { username: 'r', password: 'rp' } })
    expect(() => parseOptions(['--registry', 'http://registry.internal:8081'], { SCHEMA_REGISTRY_USERNAME: 'r', SCHEMA_REGISTRY_PASSWORD: 'rp' })).toThrow(/in clear over http/)
    expect(() => parseOptions([], { KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT', KAFKA_SASL_MECHANISM: 'PLAIN', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' })).toThrow(
      /KAFKA_ALLOW_INSECURE=true/,
    )
  })
})
