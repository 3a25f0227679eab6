/**
 * patches/avsc+5.7.9.patch makes avsc write a short ASCII string
 * without measuring it with Buffer.byteLength. These tests prove the patched
 * Tap#writeString writes what the Avro specification says a string is (a
 * zig-zag varint of its UTF-8 byte count, then those bytes) and what avsc's
 * original code writes, for any string, in records with other fields around
 * it, and when the value does not fit the buffer it is written into.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import fc from 'fast-check'
import avro from 'avsc'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
let avscDir = path.dirname(require.resolve('avsc'))
while (path.basename(avscDir) !== 'avsc') avscDir = path.dirname(avscDir)
const utilsFile = path.join(avscDir, 'lib', 'utils.js')

interface Tap {
  buf: Buffer
  pos: number
  writeString(s: string): void
  tepWriteStringOriginal(s: string): void
}
const { Tap } = require(utilsFile) as { Tap: new (buf: Buffer, pos?: number) => Tap }

/** The Avro specification's encoding of a string: long (zig-zag varint) byte count, then the UTF-8 bytes. */
function specString(s: string): Buffer {
  const bytes = Buffer.from(s, 'utf8')
  let n = BigInt(bytes.length) << 1n // zig-zag of a non-negative long
  const head: number[] = []
  while (n >= 0x80n) {
    head.push(Number((n & 0x7fn) | 0x80n))
    n >>= 7n
  }
  head.push(Number(n))
  return Buffer.concat([Buffer.from(head), bytes])
}

const strings = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: fc.constantFrom('a', '0', '-', '\u007f', '\u0080', 'é', '€', '\ud83d\ude00'), maxLength: 70 }),
)

function written(s: string, write: 'writeString' | 'tepWriteStringOriginal', size = 1024, at = 3): { bytes: Buffer; pos: number } {
  const tap = new Tap(Buffer.alloc(size), at)
  tap[write](s)
  return { bytes: tap.buf.subarray(at, tap.pos), pos: tap.pos }
}

describe('the patched Tap#writeString of avsc', () => {
  it('is patched (the postinstall step took)', () => {
    expect(readFileSync(utilsFile, 'utf8')).toContain('tep-patch: short ASCII strings without Buffer.byteLength')
  })

  it('writes the bytes the Avro specification gives and the original wrote, for any string', () => {
    fc.assert(
      fc.property(strings, (s) => {
        const patched = written(s, 'writeString')
        expect(patched.bytes).toEqual(specString(s))
        expect(patched.pos).toBe(written(s, 'tepWriteStringOriginal').pos)
      }),
      { numRuns: 3_000 },
    )
  })

  it('writes nothing past the string (the original wrote garbage after short non-ASCII strings)', () => {
    fc.assert(
      fc.property(strings, (s) => {
        const tap = new Tap(Buffer.alloc(512, 0xff), 2)
        tap.writeString(s)
        expect(tap.buf.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xff]))
        expect(tap.buf.subarray(tap.pos).every((b) => b === 0xff)).toBe(true)
      }),
      { numRuns: 2_000 },
    )
  })

  it('takes the fast path at every short ASCII length and the original past it (63, 64, 65 chars)', () => {
    for (let n = 0; n <= 66; n++) {
      const s = 'x'.repeat(n)
      expect(written(s, 'writeString').bytes).toEqual(specString(s))
    }
  })

  it('moves the position past the buffer when the string does not fit, as the original does (avsc then grows the buffer)', () => {
    fc.assert(
      fc.property(strings, fc.nat({ max: 40 }), (s, size) => {
        const at = Math.min(3, size)
        expect(written(s, 'writeString', size, at).pos).toBe(written(s, 'tepWriteStringOriginal', size, at).pos)
      }),
    )
  })

  it('round-trips records of strings through avsc, into buffers too small and large enough', () => {
    const type = avro.Type.forSchema({
      type: 'record',
      name: 'T',
      fields: [
        { name: 'a', type: 'string' },
        { name: 'n', type: 'long' },
        { name: 'b', type: ['null', 'string'] },
        { name: 'list', type: { type: 'array', items: 'string' } },
      ],
    })
    fc.assert(
      fc.property(strings, fc.option(strings, { nil: null }), fc.array(strings, { maxLength: 5 }), (a, b, list) => {
        const value = { a, n: 42, b, list }
        const buf = type.toBuffer(value)
        expect(type.fromBuffer(buf)).toEqual(value)
        const small = Buffer.alloc(4)
        const end = type.encode(value, small, 0)
        expect(end).toBe(buf.length <= 4 ? buf.length : 4 - buf.length)
      }),
      { numRuns: 500 },
    )
  })
})
