import { describe, expect, it } from 'vitest'
import { EntityVersions } from './entity-versions.ts'

describe('EntityVersions', () => {
  it('takes the last record read as the state of a key, and counts live entries', () => {
    const v = new EntityVersions()
    v.observeCommitted('s1', { version: 20, deleted: false })
    v.observeCommitted('s2', { version: 20, deleted: false })
    expect(v.liveCount).toBe(2)
    // A tombstone stamped by a clock behind the snapshot's still deletes it.
    v.observeCommitted('s1', { version: 10, deleted: true })
    expect(v.isLive('s1', 0)).toBe(false)
    expect(v.liveCount).toBe(1)
    v.observeCommitted('s1', { version: 30, deleted: false })
    expect(v.get('s1', 0)).toEqual({ version: 30, deleted: false })
    expect(v.liveCount).toBe(2)
  })

  it('lets its own writes shadow the committed view until read back', () => {
    const v = new EntityVersions({ pendingTtlMs: 1000 })
    v.observeCommitted('s1', { version: 10, deleted: false })
    v.recordWrite('s1', { version: 50, deleted: false }, 100)
    expect(v.get('s1', 200)?.version).toBe(50)
    v.observeCommitted('s1', { version: 50, deleted: false })
    // read back: the pending entry is gone and cannot expire the truth away
    expect(v.get('s1', 10_000)?.version).toBe(50)
  })

  it('forgets a write that never shows up (its transaction aborted) after the pending TTL', () => {
    const v = new EntityVersions({ pendingTtlMs: 1000 })
    v.observeCommitted('s1', { version: 10, deleted: false })
    v.recordWrite('s1', { version: 50, deleted: false }, 100)
    expect(v.get('s1', 1100)?.version).toBe(50)
    expect(v.get('s1', 1101)?.version).toBe(10)
  })

  it('remembers invalidations of unknown keys as a floor, bounded in number', () => {
    const v = new EntityVersions({ maxInvalidatedUnknown: 2 })
    v.markInvalidated('a', 5)
    v.markInvalidated('b', 6)
    v.markInvalidated('a', 4) // older: ignored
    expect(v.floor('a', 0)).toBe(5)
    v.markInvalidated('c', 7)
    expect(v.floor('a', 0)).toBeUndefined()
    expect(v.floor('c', 0)).toBe(7)
    v.observeCommitted('c', { version: 3, deleted: false })
    expect(v.floor('c', 0)).toBe(7)
  })
})

describe('EntityVersions.live', () => {
  it('lists live entries with their effective version, own recent writes included', () => {
    const v = new EntityVersions({ pendingTtlMs: 1000 })
    v.observeCommitted('a', { version: 1, deleted: false })
    v.observeCommitted('gone', { version: 1, deleted: true })
    v.recordWrite('a', { version: 5, deleted: false }, 0)
    v.recordWrite('new', { version: 7, deleted: false }, 0)
    v.recordWrite('expired', { version: 9, deleted: false }, -5000)
    expect([...v.live(10)]).toEqual([
      ['a', 5],
      ['new', 7],
    ])
  })
})
