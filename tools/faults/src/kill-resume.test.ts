import { describe, expect, it } from 'vitest'
import { BROKER_LOST_MAX_RESUME_SECONDS, CLUSTER_MAX_PAUSE_SECONDS, CLUSTER_SCENARIOS } from './cluster-scenarios.ts'
import { flowingSamplesAfterKill, killResumeFailures } from './kill-resume.ts'

const row = (name: string) => CLUSTER_SCENARIOS.find((s) => s.name === name)!
/** The cluster rows that kill a broker and report `resumed s after kill` (InjectResult.killedAt). */
const KILL_ROWS = ['leader-kill', 'txn-coordinator-kill', 'group-coordinator-kill']

describe('the resume bound of the cluster kill rows', () => {
  it('holds every leader and coordinator kill to the 60 s of its pause bound, from the first growth after the pause', () => {
    for (const name of KILL_ROWS) {
      expect(row(name).maxResumeSeconds, name).toBe(CLUSTER_MAX_PAUSE_SECONDS)
      expect(flowingSamplesAfterKill(row(name)), name).toBe(1)
    }
  })

  it('keeps broker-lost at 20 s, a steady flow and before the broker is back', () => {
    const lost = row('broker-lost')
    expect(lost.maxResumeSeconds).toBe(BROKER_LOST_MAX_RESUME_SECONDS)
    expect(flowingSamplesAfterKill(lost)).toBe(3)
    expect(lost.resumeBeforeBrokerBack).toBe(true)
  })

  it('fails a kill row whose output never flowed again, or later than its bound, naming the kill', () => {
    // The run of 2026-11-29 15:26: txn-coordinator-kill "never" with a 9 s pause, and passed.
    expect(killResumeFailures(row('txn-coordinator-kill'), [null], [14.4])).toEqual(['output flowed again never after kill 1, later than the 60 s this row allows'])
    expect(killResumeFailures(row('leader-kill'), [12, 61.5], [20.1, 21])).toEqual(['output flowed again 61.5 s after kill 2, later than the 60 s this row allows'])
    expect(killResumeFailures(row('group-coordinator-kill'), [0, 24], [18, 19])).toEqual([])
  })

  it('lets a leader or coordinator kill resume after its broker is back, not broker-lost', () => {
    // leader-kill once resumed 29.8 s after the kill, the broker back at 22 s: slow, within the row's bound.
    expect(killResumeFailures(row('leader-kill'), [29.8], [22])).toEqual([])
    expect(killResumeFailures(row('broker-lost'), [19], [18])).toEqual(['output flowed again only 19 s after kill 1, once the killed broker was back (18 s): it waited for the dead broker'])
    expect(killResumeFailures(row('broker-lost'), [null], [70])).toEqual(['output flowed again never after kill 1, later than the 20 s this row allows'])
    expect(killResumeFailures(row('broker-lost'), [14.2], [69.2])).toEqual([])
  })

  it('leaves a row without a bound alone', () => {
    expect(killResumeFailures({}, [null], [10])).toEqual([])
  })
})
