import { describe, expect, it } from 'vitest'
import { growthWithinSegments, leastSquaresSlope, pooledSlope } from './slope.ts'

const HOUR = 3_600_000
const line = (start: number, perHour: number, intercept: number, n: number, stepMs = 60_000) =>
  Array.from({ length: n }, (_, i) => ({ at: start + i * stepMs, value: intercept + (perHour * (i * stepMs)) / HOUR }))

describe('memory slope (least squares, MB per hour)', () => {
  it('finds the slope of a straight climb', () => {
    expect(leastSquaresSlope(line(1_000, 30, 200, 20))).toBeCloseTo(30, 6)
  })

  it('fits the least-squares line through noisy points, not the end points', () => {
    // Hours 0..3, values 1, 3, 2, 4: slope = Σ(dt·dv)/Σdt² = (−1.5·−1.5 + −0.5·0.5 + 0.5·−0.5 + 1.5·1.5)/5 = 0.8.
    const points = [1, 3, 2, 4].map((value, i) => ({ at: i * HOUR, value }))
    expect(leastSquaresSlope(points)).toBeCloseTo(0.8, 9)
  })

  it('has no slope with fewer than two distinct moments', () => {
    expect(leastSquaresSlope([])).toBeUndefined()
    expect(leastSquaresSlope([{ at: 5, value: 1 }])).toBeUndefined()
    expect(leastSquaresSlope([{ at: 5, value: 1 }, { at: 5, value: 9 }])).toBeUndefined()
  })

  it('does not read a restart as shrinking memory: each life gets its own intercept', () => {
    // Two lives of a process leaking 10 MB/h, the second starting 300 MB lower (killed and restarted).
    const first = line(0, 10, 500, 30)
    const second = line(31 * 60_000, 10, 200, 30)
    expect(pooledSlope([first, second])).toBeCloseTo(10, 6)
    // One line through both lives would show a steep fall.
    expect(leastSquaresSlope([...first, ...second])!).toBeLessThan(-100)
  })

  it('sums the growth within each life', () => {
    const first = line(0, 60, 100, 11) // 10 minutes at 60 MB/h: +10 MB
    const second = line(20 * 60_000, 120, 50, 6) // 5 minutes at 120 MB/h: +10 MB
    expect(growthWithinSegments([first, second])).toBeCloseTo(20, 6)
    expect(growthWithinSegments([[{ at: 0, value: 1 }]])).toBeUndefined()
  })

  it('leaves out a life observed for less than the shortest judged span', () => {
    const long = line(0, 60, 100, 11) // 10 minutes: +10 MB
    const short = [{ at: 30 * 60_000, value: 241 }, { at: 31 * 60_000, value: 291 }] // one minute apart: +50 MB of noise
    expect(growthWithinSegments([long, short], 3 * 60_000)).toBeCloseTo(10, 6)
    expect(growthWithinSegments([short], 3 * 60_000)).toBeUndefined()
    expect(growthWithinSegments([long, short])).toBeCloseTo(60, 6)
  })
})
