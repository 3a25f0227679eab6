/**
 * The short form of the partition rows of `npm run faults -- --brokers 3`: every
 * Kafka node and service in its own network namespace (as root, with iptables,
 * which `npm test`'s pretest installs), and two partitions made with iptables
 * under traffic: the ingest cut off from every broker with its transaction open
 * (longer than its transaction timeout and its session), and the leader of most
 * raw partitions cut off from the other brokers and controllers while clients
 * still reach it (a zombie leader). Each must end with nothing lost, duplicated
 * or dead-lettered by the fault (the independent read_committed reader), no
 * process exiting on its own, and the output flowing again within 60 s of the
 * heal.
 */
import type { SuiteResultFile } from '@tep/faults'
import { describe, expect, it } from 'vitest'
import { runFaults } from './faults-cli.ts'

// In the suite's catalogue order, which is the order the rows run and are reported in.
const ROWS = ['partition-leader-from-quorum', 'partition-service-from-cluster']

describe('npm run faults -- --brokers 3 --quick (partitions)', () => {
  it('passes the ingest partitioned from the cluster and a zombie leader with nothing lost or duplicated and output back within 60 s of each heal', { timeout: 1_200_000 }, async () => {
    const { exit, result } = await runFaults<SuiteResultFile>(['--brokers', '3', '--quick', '--scenarios', ROWS.join(','), '--events', '4000', '--rate', '200', '--seed', '35'])
    expect(result.rows.map((r) => r.scenario)).toEqual([...ROWS, 'whole-run'])
    for (const row of result.rows.filter((r) => r.scenario !== 'whole-run')) {
      // A row that checked nothing, or whose partition was never made, would pass without proving anything.
      expect(row.events, row.scenario).toBeGreaterThan(100)
      expect(row.faultsInjected, row.scenario).toBe(1)
      expect(row.notes.join(' '), row.scenario).toMatch(/cut off from/)
      expect(row.resumedAfterHealSeconds?.length, row.scenario).toBe(1)
    }
    const failed = result.rows.filter((r) => !r.passed).map((r) => `${r.scenario}: ${r.failures.join('; ')}`)
    expect(failed).toEqual([])
    expect(result.rows.map((r) => [r.scenario, r.lost, r.duplicated, r.dlqFromFaults])).toEqual(result.rows.map((r) => [r.scenario, 0, 0, 0]))
    expect(exit).toBe(0)
  })
})
