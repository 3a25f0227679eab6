import { describe, expect, it } from 'vitest'
import { HttpConfigError } from './errors.ts'
import { assertSecureUrl, isLoopbackHost } from './transport-policy.ts'

// isLoopbackHost is @tep/config's (one definition, scripts/layout/one-definition-of-loopback.test.ts); re-exported here.

describe('isLoopbackHost', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    'localhost',
    'LOCALHOST',
    'api.localhost',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
  ])('accepts %s', (host) => expect(isLoopbackHost(host)).toBe(true))

  it.each([
    '128.0.0.1',
    '10.0.0.1',
    '0.0.0.0',
    'localhost.example.com',
    'example.com',
    '::2',
    '::ffff:10.0.0.1',
    '127.example.com',
  ])('rejects %s', (host) => expect(isLoopbackHost(host)).toBe(false))
})

describe('assertSecureUrl', () => {
  it('accepts https anywhere and http to loopback', () => {
    expect(assertSecureUrl('https://api.example.com/x').origin).toBe('https://api.example.com')
    expect(assertSecureUrl('http://127.0.0.1:8181').port).toBe('8181')
    expect(assertSecureUrl('http://[::1]:8181/base').pathname).toBe('/base')
    expect(assertSecureUrl('http://localhost:1').hostname).toBe('localhost')
  })

  it('rejects plain http to a non-loopback host, naming the setting and the rule', () => {
    const err = (() => {
      try {
        assertSecureUrl('http://api.example.com/v5', 'ENRICHMENT_API_URL')
      } catch (e) {
        return e
      }
    })()
    expect(err).toBeInstanceOf(HttpConfigError)
    expect((err as HttpConfigError).code).toBe('HTTP_CONFIG_INVALID')
    expect((err as HttpConfigError).retriable).toBe(false)
    expect((err as Error).message).toMatch(
      /^ENRICHMENT_API_URL must be an https:\/\/ URL \(plain http is allowed only for loopback.*got http:\/\/api\.example\.com$/,
    )
  })

  it('rejects other protocols, relative URLs and embedded credentials without echoing them', () => {
    expect(() => assertSecureUrl('ftp://127.0.0.1/')).toThrow(/must be an https:\/\/ URL, got protocol ftp:/)
    expect(() => assertSecureUrl('/v5/shops')).toThrow(/must be an absolute https:\/\/ URL/)
    const withSecret = () => assertSecureUrl('https://user:s3cret@api.example.com/', 'BANK_API_URL')
    expect(withSecret).toThrow(/BANK_API_URL must not contain credentials/)
    try {
      withSecret()
    } catch (e) {
      expect(JSON.stringify((e as HttpConfigError).toJSON())).not.toContain('s3cret')
      expect((e as Error).message).not.toContain('s3cret')
    }
  })
})
