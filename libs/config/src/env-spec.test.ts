import { describe, expect, it } from 'vitest'
import { ConfigError } from './errors.ts'
import { envVar, formatEnvHelp, loadConfig } from './env-spec.ts'
import { base64Key, brokerList, duration, moment, port, serviceUrl } from './parsers.ts'
import { enrichmentApiVars, enrichmentClientAuth, kafkaVars, resolveEnrichmentAuth } from './shared-vars.ts'

describe('loadConfig', () => {
  it('applies defaults and parses values', () => {
    const cfg = loadConfig('svc', { ...kafkaVars, LINGER: envVar(duration, 'linger', { default: '5ms' }) }, { KAFKA_BROKERS: 'a:1, b:2' })
    expect(cfg.KAFKA_BROKERS).toEqual(['a:1', 'b:2'])
    expect(cfg.SCHEMA_REGISTRY_URL).toBe('http://127.0.0.1:8081/apis/ccompat/v7')
    expect(cfg.LINGER).toBe(5)
  })

  it('reports every bad variable at once, naming each', () => {
    const spec = { KAFKA_BROKERS: envVar(brokerList, 'brokers'), METRICS_PORT: envVar(port, 'port'), NEEDED: envVar(port, 'needed thing') }
    let err: unknown
    try {
      loadConfig('svc', spec, { KAFKA_BROKERS: 'nohostport', METRICS_PORT: '70000' })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ConfigError)
    const ce = err as ConfigError
    expect(ce.code).toBe('CONFIG_INVALID')
    expect(ce.problems.map((p) => p.variable)).toEqual(['KAFKA_BROKERS', 'METRICS_PORT', 'NEEDED'])
    expect(ce.message).toContain('KAFKA_BROKERS: expected a comma-separated host:port list (bad: nohostport)')
    expect(ce.message).toContain('NEEDED: is required')
  })

  it('never echoes a secret value in an error', () => {
    const spec = { KEY: envVar(base64Key(32), 'key', { secret: true }) }
    expect(() => loadConfig('svc', spec, { KEY: 'hunter2' })).toThrow(/KEY: expected base64 of exactly 32 bytes/)
    try {
      loadConfig('svc', spec, { KEY: 'hunter2' })
    } catch (e) {
      expect((e as Error).message).not.toContain('hunter2')
    }
  })

  it('treats an empty value as unset', () => {
    expect(loadConfig('svc', kafkaVars, { KAFKA_BROKERS: '' }).KAFKA_BROKERS).toEqual(['127.0.0.1:9092'])
  })

  it('prints help with defaults but hides secret defaults', () => {
    const help = formatEnvHelp({ A: envVar(port, 'a port', { default: '1' }), S: envVar(port, 'secret', { default: '2', secret: true }) })
    expect(help).toContain('(default: 1)')
    expect(help).toContain('(default: built-in)')
    expect(help).not.toContain('default: 2')
  })
})

describe('parsers', () => {
  it('requires https except for loopback', () => {
    const p = serviceUrl({ httpsUnlessLoopback: true })
    expect(p.parse('http://127.0.0.1:8181/')).toBe('http://127.0.0.1:8181')
    expect(p.parse('https://api.example.com')).toBe('https://api.example.com')
    expect(p.safeParse('http://api.example.com').success).toBe(false)
  })

  it('parses durations in several units', () => {
    expect(duration.parse('250ms')).toBe(250)
    expect(duration.parse('2m')).toBe(120_000)
    expect(duration.parse('7d')).toBe(604_800_000)
    expect(duration.safeParse('soon').success).toBe(false)
  })

  it('reads a moment as now, an ISO date-time or a duration ago, resolved when asked', () => {
    const before = Date.now()
    expect(moment.parse('now')().getTime()).toBeGreaterThanOrEqual(before)
    expect(moment.parse('2026-01-31T00:00:00Z')().toISOString()).toBe('2026-01-31T00:00:00.000Z')
    const weekAgo = moment.parse('7d')().getTime()
    expect(before - weekAgo).toBeGreaterThanOrEqual(7 * 86_400_000 - 1000)
    expect(before - weekAgo).toBeLessThanOrEqual(7 * 86_400_000 + 1000)
    const resolver = moment.parse('15m')
    expect(resolver().getTime()).toBeLessThanOrEqual(Date.now() - 15 * 60_000)
  })

  it('refuses any other moment with a message that shows the accepted forms', () => {
    const result = moment.safeParse('yesterday')
    expect(result.success).toBe(false)
    expect(result.error?.issues[0]?.message).toMatch(/now, an ISO-8601 date-time .* or a duration ago/)
    expect(moment.safeParse('2026-13-45T00:00:00Z').success).toBe(false)
    expect(moment.safeParse('2026-01-31').success).toBe(false)
  })
})

describe('resolveEnrichmentAuth', () => {
  const base = loadConfig('svc', enrichmentApiVars, {})
  it('derives the token URL from the API URL', () => {
    expect(resolveEnrichmentAuth({ ...base, ENRICHMENT_CLIENT_ID: 'c', ENRICHMENT_CLIENT_SECRET: 's' })).toEqual({
      kind: 'oauth',
      tokenUrl: 'http://127.0.0.1:8181/auth/protocol/openid-connect/token',
      clientId: 'c',
      clientSecret: 's',
    })
  })
  it('refuses half or double credentials', () => {
    expect(resolveEnrichmentAuth({ ...base, ENRICHMENT_CLIENT_ID: 'c' })).toHaveProperty('problem')
    expect(resolveEnrichmentAuth({ ...base, ENRICHMENT_CLIENT_ID: 'c', ENRICHMENT_CLIENT_SECRET: 's', ENRICHMENT_BASIC_USER: 'u', ENRICHMENT_BASIC_PASSWORD: 'p' })).toHaveProperty('problem')
    expect(resolveEnrichmentAuth(base)).toHaveProperty('problem')
    expect(resolveEnrichmentAuth({ ...base, ENRICHMENT_BASIC_USER: 'u', ENRICHMENT_BASIC_PASSWORD: 'p' })).toEqual({ kind: 'basic', user: 'u', password: 'p' })
  })
})

describe('enrichmentClientAuth', () => {
  it('passes OAuth client credentials with their token URL', () => {
    expect(enrichmentClientAuth({ kind: 'oauth', tokenUrl: 'https://t.example/token', clientId: 'c', clientSecret: 's' })).toEqual({
      tokenUrl: 'https://t.example/token',
      credentials: { type: 'oauth', clientId: 'c', clientSecret: 's' },
    })
  })
  it('passes Basic credentials without a token URL', () => {
    expect(enrichmentClientAuth({ kind: 'basic', user: 'u', password: 'p' })).toEqual({ credentials: { type: 'basic', username: 'u', password: 'p' } })
  })
})
