import { describe, expect, it } from 'vitest'
import { spreadKeyless, toWireMessages } from './send-plan.ts'

describe('toWireMessages', () => {
  it('turns string keys and headers into bytes and keeps tombstones and explicit partitions', () => {
    const [keyed, tombstone] = toWireMessages('t', [
      { key: 'k', value: Buffer.from('v'), headers: { h: 'x' } },
      { key: null, value: null, partition: 2 },
    ])
    expect(keyed).toEqual({ topic: 't', key: Buffer.from('k'), value: Buffer.from('v'), headers: new Map([[Buffer.from('h'), Buffer.from('x')]]) })
    expect(tombstone).toEqual({ topic: 't', partition: 2 })
  })
})

describe('spreadKeyless', () => {
  it('gives key-less messages the partitions in turn, per topic and across calls, and leaves the others', () => {
    const turns = new Map<string, number>()
    const first = toWireMessages('a', [{ value: null }, { key: 'k', value: null }, { value: null }, { value: null, partition: 0 }])
    spreadKeyless(first, () => 2, turns)
    expect(first.map((m) => m.partition)).toEqual([0, undefined, 1, 0])
    const second = toWireMessages('a', [{ value: null }])
    spreadKeyless(second, () => 2, turns)
    expect(second[0]!.partition).toBe(0)
    const other = toWireMessages('b', [{ value: null }])
    spreadKeyless(other, () => 3, turns)
    expect(other[0]!.partition).toBe(0)
  })
})
