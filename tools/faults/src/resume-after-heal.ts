import type { FlowSample } from './flow-monitor.ts'

/**
 * Seconds from a network heal at `healedAt` until the output grew again: the
 * first sample after the heal whose output is above the last output seen before
 * it. 0 when the backlog was already gone at the first sample after the heal
 * (nothing was waiting); null when neither happened before `to`.
 *
 * Why not the kill rows' measure (three growing samples in a row, flow-monitor.ts):
 * after a partition the ingest takes its partitions back one at a time (each after
 * its own back-off), so at a low rate the output comes back in steps a few seconds
 * apart; the first step is when records flow again, and the row's "recovery s"
 * (until the backlog is gone) says when all of them do.
 */
export function resumedAfterHealSeconds(samples: FlowSample[], healedAt: number, to: number, drained: (s: FlowSample) => boolean): number | null {
  const before = samples.filter((s) => s.at <= healedAt && s.output !== undefined).at(-1)?.output
  let first = true
  for (const s of samples) {
    if (s.at <= healedAt || s.at > to) continue
    const grew = s.output !== undefined && before !== undefined && s.output > before
    if (grew) return Math.round((s.at - healedAt) / 100) / 10
    if (first && drained(s)) return 0
    first = false
  }
  return null
}
