/**
 * patches/@platformatic+kafka+2.12.1.patch makes @platformatic/kafka encode each
 * produced record into one buffer sized first, instead of one small Buffer per
 * field (the garbage of which was a fifth of an exactly-once pass-through's
 * CPU). These tests prove it writes exactly the bytes the original code wrote
 * (kept as `createRecordWithWriter`) and that the client's reader reads them
 * back, for any key, value, headers and timestamp.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

interface RecordWriter {
  dynamicBuffer: { buffer: Buffer; buffers: Buffer[] }
}
interface Message {
  key?: Buffer | null
  value?: Buffer | null
  headers?: Map<Buffer, Buffer | null>
  timestamp?: bigint
}
type Encode = (message: Message, offsetDelta: number, firstTimestamp: bigint) => RecordWriter

const kafkaEntry = createRequire(import.meta.url).resolve('@platformatic/kafka')
let dist = path.dirname(kafkaEntry)
while (path.basename(dist) !== 'dist') dist = path.dirname(dist)
const recordsFile = path.join(dist, 'protocol', 'records.js')
const records = (await import(pathToFileURL(recordsFile).href)) as {
  createRecord: Encode
  createRecordWithWriter?: Encode
  readRecord(reader: unknown): { attributes: number; timestampDelta: bigint; offsetDelta: number; key: Buffer | null; value: Buffer | null; headers: Array<[Buffer | null, Buffer | null]> }
}
const { Reader } = (await import(pathToFileURL(path.join(dist, 'protocol', 'reader.js')).href)) as { Reader: { from(buffer: Buffer): unknown } }

const bytes = fc.option(fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), { nil: null })
const message = fc.record({
  key: bytes,
  value: bytes,
  headers: fc.option(fc.array(fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 20 }).map((a) => Buffer.from(a)), bytes), { maxLength: 4 }), { nil: undefined }),
  // Deltas from the batch's first timestamp, both signs (the original encodes |delta| < 2^31 right).
  delta: fc.integer({ min: -(2 ** 31) + 1, max: 2 ** 31 - 1 }),
  offsetDelta: fc.nat({ max: 100_000 }),
})

describe('the patched record encoding of @platformatic/kafka', () => {
  it('is patched (the postinstall step took)', () => {
    expect(readFileSync(recordsFile, 'utf8')).toContain('tep-patch: one buffer per produced record')
    expect(records.createRecordWithWriter).toBeTypeOf('function')
  })

  it('writes one buffer with the bytes the original wrote field by field, which the reader reads back', () => {
    fc.assert(
      fc.property(message, (m) => {
        const first = 1_795_000_000_000n
        const input: Message = {
          key: m.key,
          value: m.value,
          timestamp: first + BigInt(m.delta),
          ...(m.headers === undefined ? {} : { headers: new Map(m.headers) }),
        }
        const patched = records.createRecord(input, m.offsetDelta, first)
        const original = records.createRecordWithWriter!(input, m.offsetDelta, first)
        expect(patched.dynamicBuffer.buffers).toHaveLength(1)
        expect(patched.dynamicBuffer.buffer.equals(original.dynamicBuffer.buffer)).toBe(true)
        const back = records.readRecord(Reader.from(patched.dynamicBuffer.buffer))
        expect(back.timestampDelta).toBe(BigInt(m.delta))
        expect(back.offsetDelta).toBe(m.offsetDelta)
        expect(back.key === null ? null : Buffer.from(back.key)).toEqual(m.key === null || m.key.length === 0 ? m.key : m.key)
        expect(back.value === null ? null : Buffer.from(back.value)).toEqual(m.value)
        expect(back.headers).toHaveLength(m.headers?.length ?? 0)
      }),
    )
  })

  it('leaves what it does not expect to the original code (a value that is not a Buffer)', () => {
    const first = 1_795_000_000_000n
    const odd = { key: Buffer.from('k'), value: new Uint8Array([1, 2, 3]) as Buffer, timestamp: first }
    const patched = records.createRecord(odd, 0, first)
    // The field-by-field writer's shape: a buffer per field.
    expect(patched.dynamicBuffer.buffers.length).toBeGreaterThan(1)
    expect(patched.dynamicBuffer.buffer.equals(records.createRecordWithWriter!(odd, 0, first).dynamicBuffer.buffer)).toBe(true)
  })
})
