import { describe, expect, it } from 'vitest'
import { AgeBound } from './age-bound.ts'

describe('AgeBound', () => {
  it('is off until an item without an entity is noted, then lasts max age after the newest one', () => {
    const bound = new AgeBound(1_000)
    expect(bound.active(0)).toBe(false)
    expect(bound.note(100, 150)).toBe(true)
    expect(bound.active(1_099)).toBe(true)
    // A later item extends it and does not count as a new start.
    expect(bound.note(600, 700)).toBe(false)
    expect(bound.until).toBe(1_600)
    expect(bound.active(1_599)).toBe(true)
    expect(bound.active(1_600)).toBe(false)
  })

  it('an item older than max age (read back after a restart) does not start it', () => {
    const bound = new AgeBound(1_000)
    expect(bound.note(0, 5_000)).toBe(false)
    expect(bound.active(5_000)).toBe(false)
  })
})
