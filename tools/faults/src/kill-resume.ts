import { FLOWING_SAMPLES } from './flow-monitor.ts'
import type { Scenario } from './scenarios.ts'

/** Growing samples in a row that count as the output flowing again after a kill of `scenario` (Scenario.resumeAfterKill). */
export function flowingSamplesAfterKill(scenario: Pick<Scenario, 'resumeAfterKill'>): number {
  return scenario.resumeAfterKill === 'first-growth' ? 1 : FLOWING_SAMPLES
}

/**
 * Why a row fails on its resume figures: for each kill, `resumed` (seconds from the kill until the
 * output flowed again, null: never within the row) against the row's `maxResumeSeconds`, and, for a
 * row with `resumeBeforeBrokerBack`, against `brokerBack` (seconds from the kill until the killed
 * broker answered again). A row without a bound has nothing to fail on.
 */
export function killResumeFailures(scenario: Pick<Scenario, 'maxResumeSeconds' | 'resumeBeforeBrokerBack'>, resumed: Array<number | null>, brokerBack: number[]): string[] {
  const failures: string[] = []
  const bound = scenario.maxResumeSeconds
  for (const [i, s] of resumed.entries()) {
    if (bound !== undefined && (s === null || s > bound)) failures.push(`output flowed again ${s === null ? 'never' : `${s} s`} after kill ${i + 1}, later than the ${bound} s this row allows`)
    else if (scenario.resumeBeforeBrokerBack && s !== null && brokerBack[i] !== undefined && s >= brokerBack[i])
      failures.push(`output flowed again only ${s} s after kill ${i + 1}, once the killed broker was back (${brokerBack[i]} s): it waited for the dead broker`)
  }
  return failures
}
