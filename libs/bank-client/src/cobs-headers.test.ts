import { describe, expect, it } from 'vitest'
import { BankInvalidArgumentError } from './errors.ts'
import { buildCobsHeaders, newRequestId } from './cobs-headers.ts'

const base = {
  requestId: 'req-1',
  clientId: 'client-1',
  tppName: 'TEP',
  tppIdentification: undefined,
  now: new Date('2026-03-01T10:20:30Z'),
}

describe('buildCobsHeaders', () => {
  it('builds the mandatory set with an HTTP-date and unattended access by default', () => {
    expect(buildCobsHeaders({ ...base, accessToken: 'tok.abc' })).toEqual({
      'X-Request-ID': 'req-1',
      'X-IBM-Client-Id': 'client-1',
      Date: 'Sun, 01 Mar 2026 10:20:30 GMT',
      'User-Involved': 'false',
      'TPP-Name': 'TEP',
      Authorization: 'Bearer tok.abc',
    })
  })

  it('adds the User-* family from the per-call context', () => {
    const h = buildCobsHeaders({
      ...base,
      tppIdentification: 'CZ013574-15',
      user: {
        involved: true,
        ipAddress: '2001:db8::1',
        ipPort: 443,
        deviceOs: 'Android 15',
        userAgent: 'x'.repeat(300),
        timestamp: new Date('2026-03-01T11:00:00Z'),
        geoLocation: 'GEO:50.0875;-14.4213',
        deviceId: 'dev-7',
      },
    })
    expect(h).toMatchObject({
      'TPP-Identification': 'CZ013574-15',
      'User-Involved': 'true',
      'User-IP-Address': '2001:db8::1',
      'User-IP-Port': '443',
      'User-Device-OS': 'Android 15',
      'User-Timestamp': 'Sun, 01 Mar 2026 11:00:00 GMT',
      'User-Geo-Location': 'GEO:50.0875;-14.4213',
      'User-Device-ID': 'dev-7',
    })
    expect(h['User-User-Agent']).toHaveLength(200)
  })

  it('refuses header injection, over-long values and malformed geo locations', () => {
    expect(() => buildCobsHeaders({ ...base, user: { ipAddress: '1.2.3.4\r\nX-Evil: 1' } })).toThrow(
      BankInvalidArgumentError,
    )
    expect(() => buildCobsHeaders({ ...base, requestId: 'r'.repeat(61) })).toThrow(
      /X-Request-ID is at most 60/,
    )
    expect(() => buildCobsHeaders({ ...base, user: { geoLocation: '50.1,14.4' } })).toThrow(
      /GEO:50.0875;14.4213/,
    )
    expect(() => buildCobsHeaders({ ...base, accessToken: 'a b' })).toThrow(/access token/)
  })

  it('never puts the token into an error message', () => {
    try {
      buildCobsHeaders({ ...base, accessToken: 'secret value' })
    } catch (err) {
      expect(String(err)).not.toContain('secret')
    }
  })

  it('generates UUID request ids, different per call', () => {
    const a = newRequestId()
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(newRequestId()).not.toBe(a)
  })
})
