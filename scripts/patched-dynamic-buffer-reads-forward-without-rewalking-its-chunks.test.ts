/**
 * patches/@platformatic+dynamic-buffer+0.3.1.patch changes @platformatic/dynamic-buffer, the
 * buffer every Kafka answer is parsed from: a lookup of an offset resumes from
 * the chunk the previous one ended in instead of walking the chunk list from
 * the first chunk, and 64-bit varints are summed as numbers. These tests prove
 * the patched reads equal those of one contiguous buffer, whatever the
 * chunking and after the list changes (consume, prepend), and that a forward
 * parse touches each chunk a bounded number of times (unpatched: a 1,000-chunk
 * buffer costs ~500 chunk visits per read).
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

interface DynamicBufferLike {
  buffers: Buffer[]
  length: number
  readUnsignedVarInt(offset: number): [number, number]
  readUnsignedVarInt64(offset: number): [bigint, number]
  readVarInt64(offset: number): [bigint, number]
  readInt32BE(offset: number): number
  readUInt8(offset: number): number
  slice(start: number, end: number): Buffer
  consume(offset: number): DynamicBufferLike
  prepend(buffer: Buffer): DynamicBufferLike
}
type DynamicBufferClass = new (buffers?: Buffer | Buffer[]) => DynamicBufferLike

// Resolved the way @platformatic/kafka resolves it (it is that package's dependency, not ours).
const fromKafka = createRequire(createRequire(import.meta.url).resolve('@platformatic/kafka'))
const entry = fromKafka.resolve('@platformatic/dynamic-buffer')
const { DynamicBuffer } = (await import(pathToFileURL(entry).href)) as { DynamicBuffer: DynamicBufferClass }

/** `bytes` cut at `cuts` (positions inside it) into chunks. */
function chunked(bytes: Buffer, cuts: number[]): DynamicBufferLike {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const parts: Buffer[] = []
  let from = 0
  for (const cut of [...at, bytes.length]) {
    if (cut > from) parts.push(bytes.subarray(from, cut))
    from = Math.max(from, cut)
  }
  return new DynamicBuffer(parts)
}

/** Unsigned LEB128 varints (as Kafka writes them) of `values`, back to back. */
function varints(values: bigint[]): Buffer {
  const out: number[] = []
  for (let v of values) {
    do {
      const low = Number(v & 0x7fn)
      v >>= 7n
      out.push(v > 0n ? low | 0x80 : low)
    } while (v > 0n)
  }
  return Buffer.from(out)
}

/** Unsigned 64-bit values of every varint size (1 to 10 bytes) alike: a uniform draw would almost always take 10. */
const anyWidth = fc
  .integer({ min: 1, max: 64 })
  .chain((bits) => fc.bigInt({ min: bits === 1 ? 0n : 2n ** BigInt(bits - 1), max: 2n ** BigInt(bits) - 1n }))

describe('the patched @platformatic/dynamic-buffer', () => {
  it('is patched (the postinstall step took)', () => {
    expect(readFileSync(entry, 'utf8')).toContain('tep-patch: chunk lookups resume from the last one')
    expect(path.basename(entry)).toBe('index.js')
  })

  it('reads what one contiguous buffer reads, at any offsets in any order, however it is chunked', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 60 }),
        (raw, cuts, offsets) => {
          const bytes = Buffer.from(raw)
          const whole = new DynamicBuffer(bytes)
          const parts = chunked(bytes, cuts)
          for (const o of offsets) {
            const offset = o % bytes.length
            expect(parts.readUInt8(offset)).toBe(whole.readUInt8(offset))
            if (offset + 4 <= bytes.length) expect(parts.readInt32BE(offset)).toBe(whole.readInt32BE(offset))
            const end = offset + ((o >> 3) % (bytes.length - offset + 1))
            expect(parts.slice(offset, end).equals(whole.slice(offset, end))).toBe(true)
          }
        },
      ),
    )
  })

  it('reads 64-bit varints of every size exactly, as numbers up to 7 bytes and as BigInt beyond', () => {
    fc.assert(
      fc.property(fc.array(anyWidth, { minLength: 1, maxLength: 30 }), fc.array(fc.nat(), { maxLength: 20 }), (values, cuts) => {
        const parts = chunked(varints(values), cuts)
        let offset = 0
        for (const value of values) {
          const [read, size] = parts.readUnsignedVarInt64(offset)
          expect(read).toBe(value)
          offset += size
        }
        expect(offset).toBe(parts.length)
      }),
    )
  })

  it('reads right after its chunk list changed (consume, prepend), forward and backward', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 8, maxLength: 200 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        fc.nat(),
        fc.uint8Array({ minLength: 1, maxLength: 20 }),
        (raw, cuts, cut, head) => {
          const bytes = Buffer.from(raw)
          const parts = chunked(bytes, cuts)
          // A read near the end first: it leaves the lookup at the last chunks.
          parts.readUInt8(bytes.length - 1)
          const consumed = cut % bytes.length
          parts.consume(consumed)
          let expected = bytes.subarray(consumed)
          // The last byte first: a lookup that still remembered a chunk from before would start there.
          for (let i = expected.length - 1; i >= 0; i -= Math.max(1, i >> 1)) expect(parts.readUInt8(i)).toBe(expected[i])
          for (let i = 0; i < expected.length; i++) expect(parts.readUInt8(i)).toBe(expected[i])
          parts.readUInt8(parts.length - 1)
          parts.prepend(Buffer.from(head))
          expected = Buffer.concat([Buffer.from(head), expected])
          for (let i = expected.length - 1; i >= 0; i -= Math.max(1, i >> 1)) expect(parts.readUInt8(i)).toBe(expected[i])
          for (let i = 0; i < expected.length; i++) expect(parts.readUInt8(i)).toBe(expected[i])
        },
      ),
    )
  })

  it('visits each chunk a bounded number of times when a parse reads forward', () => {
    const chunks = Array.from({ length: 1_000 }, (_, i) => Buffer.alloc(64, i & 0x7f))
    const parts = new DynamicBuffer(chunks)
    let visits = 0
    parts.buffers = new Proxy(parts.buffers, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) visits++
        return Reflect.get(target, key, receiver) as unknown
      },
    })
    let reads = 0
    for (let offset = 0; offset < parts.length; offset += 16) {
      expect(parts.readUnsignedVarInt(offset)[0]).toBe(Math.floor(offset / 64) & 0x7f)
      reads++
    }
    // Each read looks at its own chunk (twice: lookup and byte) and steps over at most one boundary.
    expect(visits).toBeLessThanOrEqual(reads * 6)
  })
})
