import { PassThrough } from 'node:stream'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createLogger } from './logger.ts'
import { maskSensitiveText, redactDeep } from './redaction.ts'
import { gluedPrefix, gluedSuffix, hostilePan, prefix, readableDigits, suffix, writtenPan } from './testing/pan-arbitraries.ts'

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
    // Digits joined by any separator form one chain: the expiry's windows are tried too.
    expect(maskSensitiveText('4111111111111111 12/27')).toBe('411111********** 12/27')
    expect(maskSensitiveText('ref 7 4111111111111111')).toBe('ref 7 41111*******1111')
  })
  it('masks an IBAN to its country and last four', () => {
    expect(maskSensitiveText(`to ${IBAN}`)).toBe('to CZ******************5399')
  })
  it('masks an IBAN followed by an upper-case word, in lower case, or grouped by spaces or dashes (third review)', () => {
    expect(maskSensitiveText(`payee ${IBAN} EUR`)).toBe('payee CZ******************5399 EUR')
    expect(maskSensitiveText(`payee ${IBAN.toLowerCase()} eur`)).toBe('payee cz******************5399 eur')
    expect(maskSensitiveText('payee CZ65 0800 0000 1920 0014 5399 EUR')).toBe('payee CZ** **** **** **** **** 5399 EUR')
    expect(maskSensitiveText('payee CZ65-0800-0000-1920-0014-5399 EUR')).toBe('payee CZ**-****-****-****-****-5399 EUR')
    expect(maskSensitiveText(`payee ${IBAN}EUR`)).toBe('payee CZ******************5399EUR')
  })
  it('leaves numbers that are not card numbers or IBANs alone', () => {
    // No Luhn-valid 13-19 digit window; an offset; a transaction id; an IBAN-shaped id with a wrong checksum.
    expect(maskSensitiveText('id 123456789012 offset 1234567890123')).toBe('id 123456789012 offset 1234567890123')
    expect(maskSensitiveText('CZ6508 EUR 00001920 0')).toBe('CZ6508 EUR 00001920 0')
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

/** Logs `t` the `where`-th way a service does: as the message, a format argument, a field, or an error with a cause. */
function logText(logger: ReturnType<typeof capture>['logger'], t: string, where: number): void {
  if (where === 0) logger.warn(t)
  else if (where === 1) logger.warn('record %s sent to the DLQ', t)
  else if (where === 2) logger.warn({ record: { description: t, list: [t] } }, 'record sent to the DLQ')
  else logger.error(new Error(t, { cause: new Error(t) }))
  logger.flush()
}

describe('log lines (property)', () => {
  it('never hold a card number written adversarially (any separator class, Unicode digits, glued, split by newlines)', () => {
    const { logger, lines } = capture()
    fc.assert(
      fc.property(gluedPrefix, hostilePan, gluedSuffix, fc.integer({ min: 0, max: 3 }), (before, { digits, text }, after, where) => {
        const t = before + text + after
        lines.length = 0
        logText(logger, t, where)
        expect(lines).toHaveLength(1)
        // Every string of the line as written (JSON.parse undoes escapes such as \n and \u200d).
        for (const s of collectStrings(JSON.parse(lines[0]!))) expect(readableDigits(s), lines[0]).not.toContain(digits)
      }),
      { numRuns: 1000 },
    )
  })

  it('never hold a card number, whether it is in the message, a format argument, a field or an error', () => {
    const { logger, lines } = capture()
    fc.assert(
      fc.property(prefix, writtenPan, suffix, fc.integer({ min: 0, max: 3 }), (before, { digits, text }, after, where) => {
        const t = before + text + after
        lines.length = 0
        logText(logger, t, where)
        expect(lines).toHaveLength(1)
        // JSON keeps digits, spaces and dashes as they are; the escapes of the noise do not matter.
        expect(lines[0]!.replace(/[ -]/g, ''), lines[0]).not.toContain(digits)
      }),
      { numRuns: 500 },
    )
  })
})

function collectStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (value === null || typeof value !== 'object') return []
  return Object.values(value).flatMap(collectStrings)
}
