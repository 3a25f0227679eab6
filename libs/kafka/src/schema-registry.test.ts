import { describe, expect, it } from 'vitest'
import { KafkaConfigError } from './errors.ts'
import { checkRegistryTransport, createSchemaRegistry, isRegistryUnavailable } from './schema-registry.ts'

const httpError = (status: number, message: string) => Object.assign(new Error(message), { status })

describe('isRegistryUnavailable', () => {
  it('treats 5xx, 429 and socket failures (which the client reports as 400) as unavailable', () => {
    expect(isRegistryUnavailable(httpError(503, 'Service Unavailable'))).toBe(true)
    expect(isRegistryUnavailable(httpError(429, 'Too Many Requests'))).toBe(true)
    expect(isRegistryUnavailable(httpError(400, 'Error, status 400: connect ECONNREFUSED 127.0.0.1:1'))).toBe(
      true,
    )
    expect(isRegistryUnavailable(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(
      true,
    )
  })

  it('treats refusals of the schema itself as not unavailable', () => {
    expect(isRegistryUnavailable(httpError(409, 'Incompatible artifact'))).toBe(false)
    expect(isRegistryUnavailable(httpError(422, 'Invalid schema'))).toBe(false)
    expect(isRegistryUnavailable(httpError(404, 'Schema 5 not found.'))).toBe(false)
    expect(isRegistryUnavailable(new Error('Invalid Avro schema'))).toBe(false)
  })
})

describe('the registry transport rule', () => {
  const auth = { username: 'reg', password: 'pw' }

  it('refuses credentials over http:// to a host off loopback, before anything is sent', () => {
    expect(() => createSchemaRegistry({ url: 'http://registry.internal:8081', auth })).toThrow(KafkaConfigError)
    expect(() => checkRegistryTransport('http://10.0.0.7:8081/apis/ccompat/v7', true)).toThrow(/sent in clear over http:\/\/ to 10\.0\.0\.7:8081/)
  })

  it('allows credentials over https:// and over http:// on loopback, without a warning', () => {
    expect(checkRegistryTransport('https://registry.example.com', true)).toBeUndefined()
    for (const url of ['http://127.0.0.1:8081', 'http://localhost:8081', 'http://[::1]:8081']) expect(checkRegistryTransport(url, true)).toBeUndefined()
  })

  it('allows plain http without credentials off loopback, with a warning logged', () => {
    const warnings: string[] = []
    const none = () => {}
    createSchemaRegistry({ url: 'http://registry.internal:8081', logger: { debug: none, info: none, error: none, warn: (_o: object, m?: string) => warnings.push(m ?? '') } })
    expect(warnings).toEqual([expect.stringMatching(/registry\.internal:8081 over plain http/)])
  })
})
