import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createLogger } from './logger.ts'

function capture() {
  const stream = new PassThrough()
  const raw: string[] = []
  stream.on('data', (chunk: Buffer) => raw.push(...chunk.toString().split('\n').filter(Boolean)))
  return { logger: createLogger({ name: 't', destination: stream }), raw }
}

const PAN = '4111111111111111'

describe('createLogger redacts what does not pass through the merge object', () => {
  it("a child's bindings: secrets and card numbers in them", () => {
    const { logger, raw } = capture()
    logger.child({ clientSecret: 's3cr3t-value', request: { description: `card ${PAN}` } }).info('hello')
    expect(raw).toHaveLength(1)
    expect(raw[0]).not.toContain('s3cr3t-value')
    expect(raw[0]).not.toContain(PAN)
    expect(raw[0]).toContain('hello')
  })

  it('%o, %O and %j arguments: interpolated objects are redacted first', () => {
    const { logger, raw } = capture()
    logger.info('options %o', { clientSecret: 's3cr3t-value', nested: { accessToken: 'tok-value' } })
    logger.info('card %j', { note: `paid with ${PAN}` })
    logger.info({ consentId: 'c' }, 'with merge object and %O', { refreshToken: 'refresh-value' })
    const text = raw.join('\n')
    expect(raw).toHaveLength(3)
    for (const secret of ['s3cr3t-value', 'tok-value', PAN, 'refresh-value']) expect(text).not.toContain(secret)
  })
})

describe('createLogger children of children', () => {
  it('redacts the bindings of a grandchild too', () => {
    const { logger, raw } = capture()
    logger.child({ a: 1 }).child({ token: 'grand-token', note: `card ${PAN}` }).warn('x')
    expect(raw[0]).not.toContain('grand-token')
    expect(raw[0]).not.toContain(PAN)
  })
})
