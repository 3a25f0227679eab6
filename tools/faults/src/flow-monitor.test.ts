import { describe, expect, it } from 'vitest'
import { backlogBehind, resumedAfterSeconds, waitCaughtUp, type FlowSample } from './flow-monitor.ts'

const KILL = 100_000
/** One sample a second from 5 s before the kill: output per second as given (undefined: Kafka did not answer). */
function samples(outputs: Array<number | undefined>): FlowSample[] {
  let total = 1_000
  return outputs.map((o, i) => {
    if (o !== undefined) total += o
    return { at: KILL - 5_000 + i * 1_000, lag: 500, output: o === undefined ? undefined : total }
  })
}
const waiting = () => true
const flowing = (n: number) => Array<number>(n).fill(200)
const stalled = (n: number) => Array<number>(n).fill(0)

describe('resumedAfterSeconds', () => {
  it('measures from the kill to the first of three growing samples after the pause', () => {
    // Kill at index 5; output grows twice more (transactions already committing), stalls, flows from index 25 (20 s after the kill).
    const s = samples([...flowing(7), ...stalled(18), ...flowing(10)])
    expect(resumedAfterSeconds(s, KILL, Infinity, waiting)).toBe(20)
  })

  it('does not count one transaction slipping through the pause as the output flowing again', () => {
    const s = samples([...flowing(6), ...stalled(8), 200, ...stalled(10), ...flowing(10)])
    expect(resumedAfterSeconds(s, KILL, Infinity, waiting)).toBe(20)
  })

  it('counts samples that Kafka did not answer as part of the pause', () => {
    const s = samples([...flowing(6), undefined, undefined, ...stalled(5), ...flowing(5)])
    expect(resumedAfterSeconds(s, KILL, Infinity, waiting)).toBe(8)
  })

  it('is 0 when the output never stopped and null when it never came back', () => {
    expect(resumedAfterSeconds(samples(flowing(30)), KILL, Infinity, waiting)).toBe(0)
    expect(resumedAfterSeconds(samples([...flowing(6), ...stalled(30)]), KILL, Infinity, waiting)).toBeNull()
  })

  it('with one flowing sample, is the first growth after the pause (a backlog back in one transaction, then nothing more to do)', () => {
    // txn-coordinator-kill of 2026-11-29 15:26 (quick run): Kafka did not answer the monitor from the kill to 17.9 s,
    // then the whole backlog came in one sample (+1,160), the trickle's rest in one more (+19), and the pipeline was
    // drained with nothing more to write: never three growing samples in a row, so "never" by the steady measure.
    const s = samples([...flowing(6), ...Array<undefined>(17), 1_160, 0, 19, ...stalled(10)])
    expect(resumedAfterSeconds(s, KILL, Infinity, waiting)).toBeNull()
    expect(resumedAfterSeconds(s, KILL, Infinity, waiting, 10_000, 1)).toBe(18)
  })

  it('with one flowing sample, does not count growth before the pause began (transactions already committing at the kill)', () => {
    const s = samples([...flowing(8), ...stalled(10), ...flowing(1), ...stalled(5)])
    expect(resumedAfterSeconds(s, KILL, Infinity, waiting, 10_000, 1)).toBe(13)
    expect(resumedAfterSeconds(samples([...flowing(8), ...stalled(20)]), KILL, Infinity, waiting, 10_000, 1)).toBeNull()
  })

  it('is no pause while nothing waits (a drained pipeline is idle, not stalled)', () => {
    const s = samples([...flowing(6), ...stalled(15), ...flowing(5)])
    expect(resumedAfterSeconds(s, KILL, Infinity, () => false)).toBe(0)
  })
})

describe('waitCaughtUp', () => {
  const ends = [
    { partition: 0, high: 100n },
    { partition: 1, high: 50n },
  ]
  const within = (behind: number) => behind <= 4

  it('counts what the group has not committed below the end offsets', () => {
    expect(backlogBehind(ends, new Map([[0, 90n]]))).toBe(60)
    expect(backlogBehind(ends, new Map([[0, 120n], [1, 49n]]))).toBe(1)
  })

  it('resolves once the group has committed what was written when it was called, not what came later', async () => {
    // Traffic goes on: every later look at the ends would find 1,000 more records per partition.
    let looks = 0
    const committed = [new Map([[0, 10n]]), undefined, new Map([[0, 60n], [1, 20n]]), new Map([[0, 99n], [1, 49n]])]
    let calls = 0
    const read = {
      ends: async () => {
        const more = 1_000n * BigInt(looks++)
        return ends.map((e) => ({ ...e, high: e.high + more }))
      },
      committed: async () => {
        const c = committed[Math.min(calls++, committed.length - 1)]
        if (c === undefined) throw new Error('broker down')
        return c
      },
    }
    expect(await waitCaughtUp(read, within, 5_000, 1)).toBeTypeOf('number')
    expect(calls).toBe(4)
  })

  it('returns undefined when the group never catches up within the timeout', async () => {
    const read = { ends: async () => ends, committed: async () => new Map([[0, 10n]]) }
    expect(await waitCaughtUp(read, within, 30, 5)).toBeUndefined()
  })
})
