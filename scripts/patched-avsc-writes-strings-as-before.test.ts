/**
 * scripts/patch-platformatic-kafka.mjs (fifth patch) makes avsc write a short
 * ASCII string byte by byte instead of asking Buffer.byteLength first. These
 * tests prove it writes exactly what Avro's string encoding is (a zig-zag
 * varint length, then the UTF-8 bytes) for any string, around the 64-character
 * edge and with non-ASCII text that starts ASCII, that avsc reads it back, and
 * that a buffer too small for a value is still reported as avsc always did.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import avro from 'avsc'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
let avscDir = path.dirname(require.resolve('avsc'))
while (path.basename(avscDir) !== 'avsc') avscDir = path.dirname(avscDir)
const stringType = avro.Type.forSchema('string')
const record = avro.Type.forSchema({ type: 'record', name: 'R', fields: [{ name: 'a', type: 'string' }, { name: 'n', type: 'long' }, { name: 'b', type: 'string' }] })

/** Avro's encoding of a string, from the specification (not from avsc). */
function expected(s: string): Buffer {
  const utf8 = Buffer.from(s, 'utf8')
  const bytes: number[] = []
  let v = utf8.length * 2
  while (v >= 0x80) {
    bytes.push((v & 0x7f) | 0x80)
    v = Math.floor(v / 0x80)
  }
  bytes.push(v)
  return Buffer.concat([Buffer.from(bytes), utf8])
}

const strings = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 70 }),
  fc.nat({ max: 130 }).map((n) => 'x'.repeat(n)),
  fc.tuple(fc.nat({ max: 62 }), fc.constantFrom('é', '€', '🛒', '\u007f', '\u0080')).map(([n, c]) => `${'a'.repeat(n)}${c}`),
)

describe('the patched string writes of avsc', () => {
  it('is patched (the postinstall step took)', () => {
    expect(readFileSync(path.join(avscDir, 'lib', 'utils.js'), 'utf8')).toContain('tep-patch: short ASCII strings without Buffer.byteLength')
  })

  it("writes Avro's bytes for any string, which avsc reads back", () => {
    fc.assert(
      fc.property(strings, (s) => {
        const bytes = stringType.toBuffer(s)
        expect(bytes).toEqual(expected(s))
        expect(stringType.fromBuffer(bytes)).toBe(s)
      }),
      { numRuns: 2_000 },
    )
  })

  it('writes records of strings at any position, and reports a buffer that is too small as before', () => {
    fc.assert(
      fc.property(strings, fc.integer(), strings, fc.nat({ max: 40 }), (a, n, b, room) => {
        const value = { a, n, b }
        const whole = Buffer.concat([expected(a), Buffer.from(avro.Type.forSchema('long').toBuffer(n)), expected(b)])
        expect(record.toBuffer(value)).toEqual(whole)
        // avsc's encode into a fixed buffer: the end, or minus the bytes missing.
        const buf = Buffer.alloc(room)
        const end = record.encode(value, buf, 0)
        if (whole.length <= room) {
          expect(end).toBe(whole.length)
          expect(buf.subarray(0, end)).toEqual(whole)
        } else expect(end).toBe(room - whole.length)
      }),
      { numRuns: 1_000 },
    )
  })
})
