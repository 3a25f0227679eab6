import { describe, expect, it } from 'vitest'
import { isRegistryUnavailable } from './schema-registry.ts'

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
