import { describe, expect, it } from 'vitest'
import { czechAccountNumber, isValidCzechAccountPart, isValidIban, makeIban } from './bank-numbers.ts'
import { KeyIndex } from './key-index.ts'
import { Permutation } from './permutation.ts'
import { normaliseText, printed } from './text.ts'

describe('Permutation', () => {
  it('is a bijection on a domain that is not a power of two, and invert undoes permute', () => {
    const p = new Permutation(1_000, 12345)
    const seen = new Set<number>()
    for (let i = 0; i < 1_000; i++) {
      const v = p.permute(i)
      expect(v).toBeGreaterThanOrEqual(0)
      expect(v).toBeLessThan(1_000)
      expect(p.invert(v)).toBe(i)
      seen.add(v)
    }
    expect(seen.size).toBe(1_000)
  })

  it('works on the full 32-bit domain', () => {
    const p = new Permutation(2 ** 32, 7)
    for (const i of [0, 1, 2 ** 31, 2 ** 32 - 1]) expect(p.invert(p.permute(i))).toBe(i)
  })
})

describe('bank numbers', () => {
  it('builds Czech account numbers that pass the modulo-11 check, and known IBANs validate', () => {
    for (const free of ['00000000', '12345678', '99999999', '31415926']) expect(isValidCzechAccountPart(czechAccountNumber(free))).toBe(true)
    expect(isValidCzechAccountPart('19')).toBe(true)
    expect(isValidCzechAccountPart('1234567890')).toBe(false)
    // Published example IBANs.
    expect(isValidIban('CZ65 0800 0000 1920 0014 5399')).toBe(true)
    expect(isValidIban('GB29 NWBK 6016 1331 9268 19')).toBe(true)
    expect(isValidIban('GB28 NWBK 6016 1331 9268 19')).toBe(false)
    expect(makeIban('CZ', '08000000192000145399')).toBe('CZ6508000000192000145399')
  })
})

describe('text', () => {
  it('normalises printed names for matching', () => {
    expect(normaliseText('  Kavárna „U Mlýna“ – Praha-5 ')).toBe('KAVARNA U MLYNA PRAHA 5')
    expect(normaliseText('Łódź Straße')).toBe('LODZ STRASSE')
    expect(printed('Café Zlatá Hvězda & syn, s.r.o.', 25)).toBe('CAFE ZLATA HVEZDA & SYN S')
  })
})

describe('KeyIndex', () => {
  it('answers keys it holds, misses others, and keeps the first owner of a contested key', () => {
    const keys: string[][] = [['a', 'b'], ['c'], ['a']]
    const index = new KeyIndex(10, (v) => keys[v] ?? [])
    expect(index.add('a', 0)).toBe(true)
    expect(index.add('b', 0)).toBe(true)
    expect(index.add('c', 1)).toBe(true)
    expect(index.add('a', 2)).toBe(false)
    expect([index.get('a'), index.get('b'), index.get('c'), index.get('d')]).toEqual([0, 0, 1, undefined])
  })
})
