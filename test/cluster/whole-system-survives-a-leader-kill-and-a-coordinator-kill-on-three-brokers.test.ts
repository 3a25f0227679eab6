/**
 * The short cluster row of `npm run faults -- --brokers 3`, so CI catches
 * regressions in failover handling: the whole system on a three-broker KRaft
 * cluster (replication factor 3, min ISR 2), a kill -9 of the broker leading
 * most raw partitions and one of the ingest's transaction coordinator while
 * traffic flows. Every row, checked by the independent read_committed reader,
 * must pass: nothing lost, duplicated or dead-lettered by the faults, no
 * process exiting on its own, and the output resuming by itself within the
 * row's pause bound. Before the consumer recovery, the first kill left the
 * ingest alive and idle for good (`consumer stream failed`). Then the loss of
 * the broker that matters most (`broker-lost`, kept down 60 s here): the
 * output must flow again while that broker is still down, not wait for it.
 */
import type { SuiteResultFile } from '@tep/faults'
import { describe, expect, it } from 'vitest'
import { runFaults } from '../faults/faults-cli.ts'

describe('npm run faults -- --brokers 3 --quick', () => {
  it('passes a leader kill, a transaction coordinator kill and a lost broker with nothing lost or duplicated', { timeout: 900_000 }, async () => {
    const { exit, result } = await runFaults<SuiteResultFile>(['--brokers', '3', '--quick', '--scenarios', 'leader-kill,txn-coordinator-kill,broker-lost', '--events', '4000', '--rate', '300', '--seed', '11'])
    expect(result.options.brokers).toBe(3)
    expect(result.rows.map((r) => r.scenario)).toEqual(['leader-kill', 'txn-coordinator-kill', 'broker-lost', 'whole-run'])
    for (const row of result.rows) expect(row.brokers, row.scenario).toBe(3)
    for (const row of result.rows.filter((r) => r.scenario !== 'whole-run')) {
      // A row that checked nothing or killed nothing would pass without proving anything.
      expect(row.events, row.scenario).toBeGreaterThan(100)
      expect(row.faultsInjected, row.scenario).toBe(1)
      expect(row.notes.join(' '), row.scenario).toMatch(/broker \d \(/)
      expect(row.resumedAfterKillSeconds, row.scenario).toHaveLength(1)
    }
    // The output flowed again before the killed broker was back: nothing waited for it.
    const lost = result.rows.find((r) => r.scenario === 'broker-lost')!
    const [resumed] = lost.resumedAfterKillSeconds
    expect(resumed, 'the output never flowed again after the kill').not.toBeNull()
    expect(resumed!, lost.notes.join('\n')).toBeLessThan(lost.brokerBackAfterKillSeconds[0]!)
    const failed = result.rows.filter((r) => !r.passed).map((r) => `${r.scenario}: ${r.failures.join('; ')}`)
    expect(failed).toEqual([])
    expect(result.rows.map((r) => [r.scenario, r.lost, r.duplicated, r.dlqFromFaults])).toEqual(result.rows.map((r) => [r.scenario, 0, 0, 0]))
    expect(exit).toBe(0)
  })
})
