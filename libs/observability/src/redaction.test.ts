import { PassThrough } from 'node:stream'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLogger } from './logger.ts'
import { maskSensitiveText, redactDeep } from './redaction.ts'
import { prefix, suffix, writtenPan } from './testing/pan-arbitraries.ts'

// A Luhn-valid test PAN and a checksum-valid Czech IBAN.
const PAN = '4111111111111111'
const IBAN = 'CZ6508000000192000145399'

function capture() {
  const stream = new PassThrough()
  const lines: string[] = []
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)))
  return { logger: createLogger({ name: 't', destination: stream }), lines }
}

describe('maskSensitiveText', () => {
  it('masks a PAN to its BIN and last four, grouped or not', () => {
    expect(maskSensitiveText(`card ${PAN} declined`)).toBe('card 411111******1111 declined')
    // In place: the groups stay, so the length and the rest of the line do too.
    expect(maskSensitiveText('card 4111 1111 1111 1111.')).toBe('card 4111 11** **** 1111.')
    expect(maskSensitiveText('4111111111111111 12/27')).toBe('411111******1111 12/27')
    expect(maskSensitiveText('ref 7 4111111111111111')).toBe('ref 7 411111******1111')
  })
  it('masks an IBAN to its country and last four', () => {
    expect(maskSensitiveText(`to ${IBAN}`)).toBe('to CZ******************5399')
  })
  it('leaves numbers that are not card numbers or IBANs alone', () => {
    // Not Luhn-valid; an offset; a transaction id; an IBAN-shaped id with a wrong checksum.
    expect(maskSensitiveText('id 4111111111111112 offset 1234567890123')).toBe('id 4111111111111112 offset 1234567890123')
    expect(maskSensitiveText('TX20261125ABCDEFGH')).toBe('TX20261125ABCDEFGH')
  })
})

describe('redactDeep', () => {
  it('censors sensitive keys at any depth, whatever their spelling', () => {
    const out = redactDeep({ a: { b: { c: { refresh_token: 'r1', 'Access-Token': 'a1', accountNumber: '123', ok: 'x' } } } })
    expect(out).toEqual({ a: { b: { c: { refresh_token: '[REDACTED]', 'Access-Token': '[REDACTED]', accountNumber: '[REDACTED]', ok: 'x' } } } })
  })
  it('masks PANs in error messages and causes, and survives cycles', () => {
    const err = new Error(`cardBin ${PAN} is too long`, { cause: new Error(`iban ${IBAN}`) })
    const obj: Record<string, unknown> = { err }
    obj.self = obj
    const text = JSON.stringify(redactDeep(obj))
    expect(text).not.toContain(PAN)
    expect(text).not.toContain(IBAN)
    expect(text).toContain('[Circular]')
  })
})

describe('createLogger', () => {
  it('never writes a PAN, an IBAN or a nested token, in fields, messages or errors', () => {
    const { logger, lines } = capture()
    logger.info({ consent: { tokens: { bank: { refreshToken: 'rt-secret' } }, debtor: { iban: IBAN } } }, `paid from ${IBAN}`)
    logger.warn({ record: { description: `card ${PAN}` } }, 'record sent to the DLQ')
    logger.error(new Error(`bad cardBin ${PAN}`))
    logger.flush()
    const text = lines.join('\n')
    expect(lines).toHaveLength(3)
    for (const secret of [PAN, IBAN, 'rt-secret']) expect(text).not.toContain(secret)
    expect(text).toContain('411111******1111')
    expect(text).toContain('paid from CZ******************5399')
  })
})

describe('log lines (property)', () => {
  it('never hold a card number, whether it is in the message, a format argument, a field or an error', () => {
    const { logger, lines } = capture()
    fc.assert(
      fc.property(prefix, writtenPan, suffix, fc.integer({ min: 0, max: 3 }), (before, { digits, text }, after, where) => {
        const t = before + text + after
        lines.length = 0
        if (where === 0) logger.warn(t)
        else if (where === 1) logger.warn('record %s sent to the DLQ', t)
        else if (where === 2) logger.warn({ record: { description: t, list: [t] } }, 'record sent to the DLQ')
        else logger.error(new Error(t, { cause: new Error(t) }))
        logger.flush()
        expect(lines).toHaveLength(1)
        // JSON keeps digits, spaces and dashes as they are; the escapes of the noise do not matter.
        expect(lines[0]!.replace(/[ -]/g, ''), lines[0]).not.toContain(digits)
      }),
      { numRuns: 500 },
    )
  })
})
