import { describe, expect, it } from 'vitest'
import type { FlowSample } from './flow-monitor.ts'
import { resumedAfterHealSeconds } from './resume-after-heal.ts'

const HEAL = 100_000
/** One sample a second from 5 s before the heal: output per second as given (undefined: Kafka did not answer), lag 500 unless drained. */
function samples(outputs: Array<number | undefined>, lag = 500): FlowSample[] {
  let total = 1_000
  return outputs.map((o, i) => {
    if (o !== undefined) total += o
    return { at: HEAL - 5_000 + i * 1_000, lag, output: o === undefined ? undefined : total }
  })
}
const isDrained = (s: FlowSample) => s.lag !== undefined && s.lag <= 12

describe('resumedAfterHealSeconds', () => {
  it('measures from the heal to the first sample with more output', () => {
    const s = samples([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 50, 0, 0, 0, 200])
    expect(resumedAfterHealSeconds(s, HEAL, Infinity, isDrained)).toBe(11)
  })

  it('counts samples Kafka did not answer as no output', () => {
    const s = samples([0, 0, 0, 0, 0, 0, undefined, undefined, undefined, 40])
    expect(resumedAfterHealSeconds(s, HEAL, Infinity, isDrained)).toBe(4)
  })

  it('is 0 when nothing was waiting at the heal', () => {
    const s = samples([0, 0, 0, 0, 0, 0, 0, 0], 0)
    expect(resumedAfterHealSeconds(s, HEAL, Infinity, isDrained)).toBe(0)
  })

  it('is null when the output never grew before the end', () => {
    const s = samples([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100])
    expect(resumedAfterHealSeconds(s, HEAL, HEAL + 4_000, isDrained)).toBeNull()
  })
})
