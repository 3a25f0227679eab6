import { describe, expect, it } from 'vitest'
import { defaultRows, runnableDefaultRows } from './run-suite.ts'
import { PARTITION_SCENARIOS } from './partition-scenarios.ts'

describe('the default rows of --brokers 3', () => {
  const partitions = PARTITION_SCENARIOS.map((s) => s.name)

  it('leave out only the partition rows, saying why, where the network cannot be built (not root, no iptables)', () => {
    const { rows, leftOut } = runnableDefaultRows(3, () => 'this run is not root')
    expect(leftOut).toBe('this run is not root')
    expect(rows.some((r) => partitions.includes(r))).toBe(false)
    expect(rows).toEqual(defaultRows(3).filter((r) => !partitions.includes(r)))
    expect(rows).toContain('broker-lost')
  })

  it('are all there where it can', () => {
    expect(runnableDefaultRows(3, () => undefined)).toEqual({ rows: defaultRows(3) })
    expect(defaultRows(3)).toEqual(expect.arrayContaining(partitions))
  })
})
