import { describe, expect, it } from 'vitest'
import { medianRound } from './rounds.ts'

const round = (eventsPerSecond: number, cpuUsPerEvent = 4) => ({ events: 500_000, seconds: 500_000 / eventsPerSecond, eventsPerSecond, cpuUsPerEvent })

describe('the median of alternated bench rounds', () => {
  it("takes the middle round's figures whole and lists every round in the order run", () => {
    const result = medianRound([round(300_000, 3.9), round(220_000, 5.1), round(260_000, 4.4)])
    expect(result).toMatchObject({ eventsPerSecond: 260_000, cpuUsPerEvent: 4.4, seconds: 500_000 / 260_000 })
    expect(result.rounds).toEqual([
      { eventsPerSecond: 300_000, cpuUsPerEvent: 3.9 },
      { eventsPerSecond: 220_000, cpuUsPerEvent: 5.1 },
      { eventsPerSecond: 260_000, cpuUsPerEvent: 4.4 },
    ])
  })

  it('takes the lower middle one of an even count, and the only one of one', () => {
    expect(medianRound([round(4), round(1), round(3), round(2)]).eventsPerSecond).toBe(2)
    expect(medianRound([round(7)]).eventsPerSecond).toBe(7)
    expect(() => medianRound([])).toThrow(/no rounds/)
  })
})
