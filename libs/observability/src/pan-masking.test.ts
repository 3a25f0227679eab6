import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { findPanDigits, maskPans, maskPansInText } from './pan-masking.ts'
import { hiddenIndexes, prefix, suffix, writtenPan } from './testing/pan-arbitraries.ts'

describe('card number masking', () => {
  it('masks the two card numbers the second security review found in clear', () => {
    expect(maskPansInText('4111111111111111 12/27')).toBe('411111******1111 12/27')
    expect(maskPansInText('ref 7 4111111111111111')).toBe('ref 7 411111******1111')
    expect(maskPansInText('4111 1111 1111 1111 12/27')).toBe('4111 11** **** 1111 12/27')
    expect(maskPansInText('ref 7-4111-1111-1111-1111-99')).toBe('ref 7-4111-11**-****-1111-99')
  })

  it('leaves digit runs that are no card number alone', () => {
    for (const text of [
      'offset 4111111111111112 amount 1234567890123',
      '2026-11-26T18:00:00Z',
      'id 12 34 56',
      'x41111111111111110',
    ])
      expect(maskPansInText(text)).toBe(text)
    expect(findPanDigits(3, () => undefined).found).toBe(0)
  })

  it('never lets a Luhn-valid 13-19 digit number through in text, however it is written or surrounded', () => {
    fc.assert(
      fc.property(prefix, writtenPan, suffix, (before, { digits, text }, after) => {
        const out = maskPansInText(before + text + after)
        expect(out.length).toBe(before.length + text.length + after.length)
        const masked = out.slice(before.length, before.length + text.length)
        for (const i of hiddenIndexes(text))
          expect(masked[i], `${before}|${text}|${after} -> ${out}`).toBe('*')
        expect(out.replace(/[ -]/g, '')).not.toContain(digits)
      }),
      { numRuns: 2000 },
    )
  })

  it('never lets one through in bytes either (DLQ keys, values, headers), with the length kept', () => {
    // Arbitrary bytes around it (an Avro record: length prefixes, binary fields), rich in
    // digits, spaces and dashes.
    const byte = fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(...Buffer.from('0123456789 -')))
    const bytes = fc.array(byte, { maxLength: 40 }).map((b) => Buffer.from(b))
    const notDigit = (b: number | undefined) => b === undefined || b < 0x30 || b > 0x39
    fc.assert(
      fc.property(bytes, writtenPan, bytes, (rawBefore, { text }, rawAfter) => {
        const before = notDigit(rawBefore.at(-1)) ? rawBefore : Buffer.concat([rawBefore, Buffer.from('/')])
        const after = notDigit(rawAfter[0]) ? rawAfter : Buffer.concat([Buffer.from(':'), rawAfter])
        const input = Buffer.concat([before, Buffer.from(text), after])
        const { bytes: out, masked } = maskPans(input)
        expect(out.length).toBe(input.length)
        expect(masked).toBeGreaterThanOrEqual(1)
        const middle = out.subarray(before.length, before.length + text.length).toString('latin1')
        for (const i of hiddenIndexes(text)) expect(middle[i]).toBe('*')
        // Only digits ever change, and only to '*'.
        for (let i = 0; i < input.length; i++)
          if (out[i] !== input[i])
            expect([input[i]! >= 0x30 && input[i]! <= 0x39, out[i]]).toEqual([true, 0x2a])
      }),
      { numRuns: 2000 },
    )
  })
})
