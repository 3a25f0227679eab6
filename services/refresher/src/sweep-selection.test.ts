import { describe, expect, it } from 'vitest'
import { refreshAfter, selectStale } from './sweep-selection.ts'

const DAY = 86_400_000

describe('selectStale', () => {
  it('selects entries at least the threshold old, oldest first, up to the limit', () => {
    const entries: [string, number][] = [
      ['fresh', 9 * DAY],
      ['old-b', 2 * DAY],
      ['old-a', 1 * DAY],
      ['edge', 4 * DAY],
    ]
    expect(selectStale(entries, 10 * DAY, 6 * DAY, 10)).toEqual({
      keys: ['old-a', 'old-b', 'edge'],
      staleTotal: 3,
    })
    expect(selectStale(entries, 10 * DAY, 6 * DAY, 2)).toEqual({ keys: ['old-a', 'old-b'], staleTotal: 3 })
  })
})

describe('refreshAfter', () => {
  it('refreshes one sweep interval plus a margin before the limit', () => {
    expect(refreshAfter(7 * DAY, DAY / 24, DAY / 2)).toBe(7 * DAY - DAY / 24 - DAY / 2)
  })
  it('rejects a sweep interval that does not fit in the limit', () => {
    expect(() => refreshAfter(DAY, DAY, 0)).toThrow(/must exceed SWEEP_INTERVAL .* plus SWEEP_MARGIN/)
    expect(() => refreshAfter(DAY, DAY, 0)).toThrow(
      expect.objectContaining({ code: 'REFRESHER_CONFIG_INVALID' }),
    )
  })
})
