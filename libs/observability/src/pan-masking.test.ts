import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { findPanDigits, maskPans, maskPansCounted, maskPansInText, passesLuhn } from './pan-masking.ts'
import {
  avroString,
  avroStringLength,
  gluedPrefix,
  gluedSuffix,
  hiddenIndexes,
  hostilePan,
  prefix,
  readableDigits,
  SEPARATOR_CLASSES,
  suffix,
  writtenPan,
} from './testing/pan-arbitraries.ts'

const PAN = '4111111111111111'

describe('card number masking', () => {
  it('masks the two card numbers the second security review found in clear', () => {
    // The expiry and the reference join the chain now (any separator joins), so more
    // than the card number's middle may be hidden; the BIN always stays readable.
    for (const text of ['4111111111111111 12/27', 'ref 7 4111111111111111', '4111 1111 1111 1111 12/27', 'ref 7-4111-1111-1111-1111-99']) {
      const out = maskPansInText(text)
      expect(readableDigits(out), text).not.toContain(PAN)
      expect(out.replace(/\D/g, ''), text).toContain('411111')
    }
    expect(maskPansInText('card 4111111111111111 declined')).toBe('card 411111******1111 declined')
    expect(maskPansInText('card 4111 1111 1111 1111.')).toBe('card 4111 11** **** 1111.')
  })

  it('masks a description that starts with the card number after an Avro length byte that is an ASCII digit (third review, High)', () => {
    // Lengths 25-28 are zig-zag encoded as 50-56: the bytes '2', '4', '6', '8'.
    for (const length of [25, 26, 27, 28]) {
      const description = `${PAN} SHOP PRAHA`.padEnd(length, 'X').slice(0, length)
      const encoded = avroString(description)
      expect(encoded[0]! >= 0x30 && encoded[0]! <= 0x39, `length ${length}`).toBe(true)
      const { bytes, masked } = maskPans(Buffer.concat([Buffer.from([0, 0, 0, 0, 1, 2]), encoded]))
      expect(masked).toBeGreaterThanOrEqual(1)
      expect(readableDigits(bytes.toString('utf8'))).not.toContain(PAN)
    }
  })

  it('masks card numbers grouped by the separators the third review found in clear', () => {
    const written = [
      '4111.1111.1111.1111', '4111/1111/1111/1111', '4111_1111_1111_1111', '4111:1111:1111:1111',
      '4111,1111,1111,1111', '4111\t1111\t1111\t1111', '4111\u00a01111\u00a01111\u00a01111',
      '4111\u20091111\u20091111\u20091111', '4111\u20131111\u20131111\u20131111', '4111  1111  1111  1111',
      '4111\u200d1111\u200d1111\u200d1111', '４１１１１１１１１１１１１１１１', `7${PAN}`, `${PAN}9`, `SHOP${PAN}PRAHA`,
      '4111\n1111\n1111\n1111',
    ]
    for (const text of written) {
      const out = maskPansInText(`card ${text} declined`)
      expect(readableDigits(out), text).not.toContain(PAN)
      expect(out.length).toBe(`card ${text} declined`.length)
    }
  })

  it('leaves digit runs alone that hold no Luhn-valid window of 13-19 digits', () => {
    for (const text of [
      '2026-11-26T18:00:00Z',
      'id 12 34 56',
      'amount 123456789012 CZK',
      'x4111111111111a1111',
      'offset 1234567890123',
    ])
      expect(maskPansInText(text)).toBe(text)
    expect(findPanDigits(3, () => undefined).found).toBe(0)
  })

  it('keeps findPanDigits compatible: code-unit positions of the hidden digits and the count', () => {
    const text = `ref ${PAN}.`
    const { positions, found } = findPanDigits(text.length, (i) => text.charCodeAt(i))
    expect(found).toBe(1)
    expect([...positions].sort((a, b) => a - b)).toEqual([10, 11, 12, 13, 14, 15])
  })

  it('counts what it masked and masks its own output no further (no card number left by its own rule)', () => {
    expect(maskPansCounted(`a ${PAN} b`)).toEqual({ text: 'a 411111******1111 b', masked: 1 })
    fc.assert(
      fc.property(gluedPrefix, hostilePan, hostilePan, gluedSuffix, (before, a, b, after) => {
        const once = maskPansInText(before + a.text + b.text + after)
        expect(maskPansCounted(once).masked).toBe(0)
      }),
      { numRuns: 500 },
    )
  })

  it('never lets a Luhn-valid 13-19 digit number through in text, however it is written or surrounded (first generation)', () => {
    fc.assert(
      fc.property(prefix, writtenPan, suffix, (before, { digits, text }, after) => {
        const out = maskPansInText(before + text + after)
        expect(out.length).toBe(before.length + text.length + after.length)
        const masked = out.slice(before.length, before.length + text.length)
        for (const i of hiddenIndexes(text)) expect(masked[i], `${before}|${text}|${after} -> ${out}`).toBe('*')
        expect(out.replace(/[ -]/g, '')).not.toContain(digits)
      }),
      { numRuns: 1000 },
    )
  })

  it('never lets one through written with any separator class, Unicode digits, glued to letters or digits, split by newlines', () => {
    fc.assert(
      fc.property(gluedPrefix, hostilePan, gluedSuffix, (before, { digits, text }, after) => {
        const input = before + text + after
        const out = maskPansInText(input)
        expect(out.length).toBe(input.length)
        expect(readableDigits(out), JSON.stringify([input, out])).not.toContain(digits)
      }),
      { numRuns: 3000 },
    )
  })

  it('never lets one through in bytes either (UTF-8, binary around it), with the length kept and only digits changed', () => {
    const byte = fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(...Buffer.from('0123456789 -.')))
    const bytes = fc.array(byte, { maxLength: 40 }).map((b) => Buffer.from(b))
    fc.assert(
      fc.property(bytes, hostilePan, bytes, (before, { digits, text }, after) => {
        const input = Buffer.concat([before, Buffer.from(text), after])
        const { bytes: out, masked } = maskPans(input)
        expect(out.length).toBe(input.length)
        expect(masked).toBeGreaterThanOrEqual(1)
        expect(readableDigits(out.subarray(before.length, before.length + Buffer.byteLength(text)).toString())).not.toContain(digits)
        // Only bytes of digits change, and only to '*'.
        for (let i = 0; i < input.length; i++) if (out[i] !== input[i]) expect(out[i]).toBe(0x2a)
      }),
      { numRuns: 2000 },
    )
  })

  it('never lets one through inside an Avro string of any length 1-4,000 (every length-prefix byte)', () => {
    fc.assert(
      fc.property(avroStringLength, hostilePan, gluedSuffix, fc.boolean(), (length, { digits, text }, after, atStart) => {
        const content = (atStart ? text + after : after + text).padEnd(length, 'x')
        const record = Buffer.concat([Buffer.from([0, 0, 0, 0, 7]), avroString('tx-1'), avroString(content), Buffer.from([2])])
        const { bytes } = maskPans(record)
        expect(readableDigits(bytes.toString('utf8'))).not.toContain(digits)
      }),
      { numRuns: 1500 },
    )
    // And each length 1-4,000 once, with the card number first (the High finding's shape).
    for (let length = 16; length <= 4000; length++) {
      const { bytes } = maskPans(avroString(`${PAN} SHOP PRAHA`.padEnd(length, 'y').slice(0, length)))
      if (readableDigits(bytes.subarray(0, 40).toString('latin1')).includes(PAN)) expect.fail(`length ${length}: ${PAN} in clear`)
    }
  })

  it('sees through every separator class alone', () => {
    for (const [name, list] of Object.entries(SEPARATOR_CLASSES))
      for (const sep of list) {
        const text = ['4111', '1111', '1111', '1111'].join(sep)
        expect(readableDigits(maskPansInText(text)), `${name} ${JSON.stringify(sep)}`).not.toContain(PAN)
      }
  })
})

describe('passesLuhn', () => {
  it('checks a whole digit string: test card numbers pass, one changed digit fails', () => {
    expect(['4111111111111111', '378282246310005', '6304000000000000018'].map(passesLuhn)).toEqual([true, true, true])
    expect(['4111111111111112', '378282246310006'].map(passesLuhn)).toEqual([false, false])
  })
})
