import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { StringPool } from './compact-io.ts'

const utf8 = (s: string) => Buffer.from(s, 'utf8')

describe('StringPool', () => {
  it('gives each distinct string one id, found by value and by UTF-8 bytes, through many growths of its index', () => {
    const pool = new StringPool()
    const n = 200_000
    for (let i = 0; i < n; i++) expect(pool.intern(`merchant-${i}`)).toBe(i)
    expect(pool.size).toBe(n)
    for (let i = 0; i < n; i += 997) {
      const bytes = utf8(`xx merchant-${i} yy`)
      expect(pool.findBytes(bytes, 3, bytes.length - 6)).toBe(i)
      expect(pool.find(`merchant-${i}`)).toBe(i)
      expect(pool.get(i)).toBe(`merchant-${i}`)
    }
    expect(pool.find('merchant-x')).toBeUndefined()
    expect(pool.findBytes(utf8('merchant-'), 0, 9)).toBeUndefined()
  })

  it('tells apart strings whose hashes collide, and strings of other lengths or encodings', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ unit: 'binary', maxLength: 40 }), { minLength: 1, maxLength: 300 }), (values) => {
        const pool = new StringPool()
        values.forEach((v, i) => expect(pool.intern(v)).toBe(i))
        values.forEach((v, i) => {
          const bytes = utf8(v)
          expect(pool.findBytes(bytes, 0, bytes.length)).toBe(i)
          expect(pool.internBytes(bytes, 0, bytes.length)).toBe(i)
        })
        expect(pool.size).toBe(values.length)
      }),
    )
    // Long values are hashed by their first and last 16 bytes only: every one of these collides.
    const pool = new StringPool()
    const middle = (i: number) => `https://example.com/${String(i).padStart(6, '0')}/0123456789abcdef`
    for (let i = 0; i < 1_000; i++) expect(pool.intern(`https://example.${middle(i)}`)).toBe(i)
    for (let i = 0; i < 1_000; i += 37) expect(pool.find(`https://example.${middle(i)}`)).toBe(i)
  })

  it('starts over empty after clear, and refuses a restore into a pool that holds strings', () => {
    const pool = new StringPool()
    pool.intern('a')
    pool.intern('b')
    pool.clear()
    expect(pool.size).toBe(0)
    expect(pool.find('a')).toBeUndefined()
    pool.restore(['b', 'a'])
    expect(pool.find('a')).toBe(1)
    expect(() => pool.restore(['c'])).toThrow('only an empty string pool can be restored')
    expect(() => new StringPool().restore(['x', 'x'])).toThrow('a pool state holds a string twice')
  })
})
