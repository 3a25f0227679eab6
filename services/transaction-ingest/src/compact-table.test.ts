import { describe, expect, it } from 'vitest'
import { CompactTable } from './compact-table.ts'

const asString = (chunk: Buffer, offset: number, length: number): string =>
  chunk.toString('utf8', offset, offset + length)

function put(table: CompactTable, key: string, value: string): void {
  table.set(key, Buffer.from(value))
}

describe('CompactTable', () => {
  it('stores, replaces and deletes values by key', () => {
    const table = new CompactTable()
    put(table, 'a', 'one')
    put(table, 'b', 'two')
    put(table, 'a', 'uno')
    expect(table.get('a', asString)).toBe('uno')
    expect(table.get('b', asString)).toBe('two')
    expect(table.size).toBe(2)
    expect(table.delete('a')).toBe(true)
    expect(table.delete('a')).toBe(false)
    expect(table.get('a', asString)).toBeUndefined()
    expect(table.has('b')).toBe(true)
    expect(table.size).toBe(1)
  })

  it('takes keys as UTF-8 bytes too (the table load), as the same entries as string keys', () => {
    const table = new CompactTable()
    const keys = ['shop-1', 'obchod-č-2', 'ünïcødé-🛒', '']
    const frame = Buffer.from(`xx${keys.join('|')}yy`)
    let at = 2
    for (const key of keys) {
      const length = Buffer.byteLength(key)
      // Values of every copy path: short (a loop) and above 256 bytes (a native copy).
      table.setBytes(frame, at, length, Buffer.from(`${key}=bytes`.padEnd(key.length % 2 === 0 ? 300 : 20, '.')))
      at += length + 1
    }
    expect(table.size).toBe(keys.length)
    for (const key of keys) expect(table.get(key, asString)?.startsWith(`${key}=bytes`)).toBe(true)
    // A string key replaces what a byte key stored, and the other way round.
    put(table, 'shop-1', 'by string')
    expect(table.get('shop-1', asString)).toBe('by string')
    const key = Buffer.from('obchod-č-2')
    table.setBytes(key, 0, key.length, Buffer.from('by bytes again'), 8)
    expect(table.get('obchod-č-2', asString)).toBe('by bytes')
    expect(table.size).toBe(keys.length)
    expect([...table.keys()].sort()).toEqual([...keys].sort())
  })

  it('keeps every entry through index growth, deletions and arena compaction', () => {
    const table = new CompactTable()
    const n = 60_000
    const big = 'x'.repeat(600)
    for (let i = 0; i < n; i++) put(table, `shop-${i}`, `${i}:${big}`)
    // Rewrite every entry twice and delete a third: garbage passes the compaction threshold.
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < n; i++) put(table, `shop-${i}`, `${i}:${round}:${big}`)
    for (let i = 0; i < n; i += 3) table.delete(`shop-${i}`)
    expect(table.size).toBe(n - Math.ceil(n / 3))
    for (let i = 0; i < n; i++) {
      const value = table.get(`shop-${i}`, asString)
      if (i % 3 === 0) expect(value).toBeUndefined()
      else expect(value).toBe(`${i}:1:${big}`)
    }
    // Compaction must have reclaimed the rewritten versions: live data is ~2/3 of one version.
    expect(table.memoryBytes).toBeLessThan(3 * table.liveBytes)
    expect(new Set(table.keys()).size).toBe(table.size)
  })

  it('distinguishes keys with equal hashes prefixes and non-ASCII keys', () => {
    const table = new CompactTable()
    put(table, 'uid@cz', 'cz')
    put(table, 'uid@gb', 'gb')
    put(table, 'žluťoučký', 'kůň')
    put(table, '', 'empty key')
    expect(table.get('uid@cz', asString)).toBe('cz')
    expect(table.get('uid@gb', asString)).toBe('gb')
    expect(table.get('žluťoučký', asString)).toBe('kůň')
    expect(table.get('', asString)).toBe('empty key')
    expect(table.get('uid@de', asString)).toBeUndefined()
  })

  it('re-inserts into deleted slots without losing entries further along the probe chain', () => {
    const table = new CompactTable()
    for (let i = 0; i < 700; i++) put(table, `k${i}`, `v${i}`)
    for (let i = 0; i < 700; i += 2) table.delete(`k${i}`)
    for (let i = 0; i < 700; i += 2) put(table, `k${i}`, `w${i}`)
    for (let i = 0; i < 700; i++) expect(table.get(`k${i}`, asString)).toBe(i % 2 === 0 ? `w${i}` : `v${i}`)
    expect(table.size).toBe(700)
  })

  it('moves to another table through a transfer with every entry, deletion and free slot intact', () => {
    const source = new CompactTable()
    for (let i = 0; i < 5_000; i++) put(source, `k${i}`, `v${i}:${'y'.repeat(i % 900)}`)
    for (let i = 0; i < 5_000; i += 4) source.delete(`k${i}`)
    const state = source.exportState()
    // The buffers travel, not copies: the sender's are detached afterwards.
    const moved = structuredClone(state, { transfer: CompactTable.transferables(state) })
    expect(state.slots.byteLength).toBe(0)
    expect(state.chunks.every((c) => c.byteLength === 0)).toBe(true)
    expect(source.size).toBe(0)

    const target = new CompactTable()
    target.restoreState(moved)
    expect(target.size).toBe(5_000 - 1_250)
    for (let i = 0; i < 5_000; i++)
      expect(target.get(`k${i}`, asString)).toBe(i % 4 === 0 ? undefined : `v${i}:${'y'.repeat(i % 900)}`)
    // It keeps working as a table: tombstoned slots reused, the index grows, the arena appends.
    for (let i = 0; i < 10_000; i += 2) put(target, `k${i}`, `w${i}`)
    for (let i = 0; i < 10_000; i++) {
      const expected = i % 2 === 0 ? `w${i}` : i < 5_000 ? `v${i}:${'y'.repeat(i % 900)}` : undefined
      expect(target.get(`k${i}`, asString)).toBe(expected)
    }
  })

  it('refuses a state whose index or chunks do not have the shape it writes', () => {
    const state = new CompactTable().exportState()
    expect(() => new CompactTable().restoreState({ ...state, slots: new Uint32Array(1000) })).toThrow(
      /invalid index capacity 1000/,
    )
    expect(() => new CompactTable().restoreState({ ...state, chunks: [new ArrayBuffer(16)] })).toThrow(
      /chunk that is not/,
    )
  })
})
