import { describe, expect, it } from 'vitest'
import type { InputMessage } from './input-message.ts'
import { RecordQueue } from './record-queue.ts'

const at = (offset: number): InputMessage => ({ offset: BigInt(offset) }) as InputMessage

describe('RecordQueue', () => {
  it('gives records back in the order they came, across its compactions', () => {
    const q = new RecordQueue()
    const taken: bigint[] = []
    let next = 0
    // Interleaved pushes and shifts, long enough to pass the compaction threshold many times.
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 997; i++) q.push(at(next++))
      for (let i = 0; i < 900; i++) taken.push(q.shift()!.offset)
    }
    while (q.length > 0) taken.push(q.shift()!.offset)
    expect(taken).toEqual(Array.from({ length: next }, (_, i) => BigInt(i)))
    expect(q.shift()).toBeUndefined()
  })

  it('counts what is left, and drops what lies below a committed offset', () => {
    const q = new RecordQueue()
    for (let i = 10; i < 20; i++) q.push(at(i))
    q.shift()
    expect(q.length).toBe(9)
    expect(q.dropBelow(15n)).toBe(4)
    expect(q.length).toBe(5)
    expect(q.shift()!.offset).toBe(15n)
    q.clear()
    expect(q.length).toBe(0)
  })
})
