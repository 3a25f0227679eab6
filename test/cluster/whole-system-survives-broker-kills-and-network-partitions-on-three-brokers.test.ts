/**
 * The short cluster rows of `npm run faults -- --brokers 3`, in one run (one
 * cluster boot, one whole-run check) so CI catches regressions in failover and
 * partition handling: the whole system on a three-broker KRaft cluster
 * (replication factor 3, min ISR 2), every Kafka node and service in its own
 * network namespace (as root, with iptables, which `npm test`'s pretest
 * installs).
 *
 * The broker kills: a kill -9 of the broker leading most raw partitions and one
 * of the ingest's transaction coordinator while traffic flows. Before the
 * consumer recovery, the first kill left the ingest alive and idle for good
 * (`consumer stream failed`). Then the loss of the broker that matters most
 * (`broker-lost`, kept down 40 s here): the output must flow again while that
 * broker is still down, not wait for it. Every kill row must report a resume
 * figure within its bound (60 s for the leader and coordinator kills, from the
 * kill to the first growth of the output after its pause; 20 s for
 * `broker-lost`): "never" fails, whatever the row's pause.
 *
 * The partitions, made with iptables under traffic: the leader of most raw
 * partitions cut off from the other brokers and controllers while clients still
 * reach it (a zombie leader), and the ingest cut off from every broker with its
 * transaction open (longer than its transaction timeout and its session). Each
 * must end with the output flowing again within 60 s of the heal.
 *
 * Every row, checked by the independent read_committed reader, must pass:
 * nothing lost, duplicated or dead-lettered by the faults, no process exiting on
 * its own, and the output resuming within the row's bound; then the whole run is
 * checked once more.
 */
import type { SuiteResultFile } from '@tep/faults'
import { describe, expect, it } from 'vitest'
import { runFaults } from '../faults/faults-cli.ts'

// In the suite's catalogue order, which is the order the rows run and are reported in.
const KILL_ROWS = ['leader-kill', 'txn-coordinator-kill', 'broker-lost']
const PARTITION_ROWS = ['partition-leader-from-quorum', 'partition-service-from-cluster']

/** Each row's pause and resume figures, and the kill rows' growth timelines. */
function renderRows(rows: SuiteResultFile['rows']): string {
  return rows
    .map((r) => {
      const resumed = r.resumedAfterHealSeconds ? `resumed after heal ${JSON.stringify(r.resumedAfterHealSeconds)}` : `resumed after kill ${JSON.stringify(r.resumedAfterKillSeconds)} (bound ${r.maxResumeSeconds ?? '—'}), broker back ${JSON.stringify(r.brokerBackAfterKillSeconds)}`
      const timelines = r.notes.filter((n) => n.startsWith('output growth after kill') || n.startsWith('kill -9'))
      return [`${r.scenario}: passed ${r.passed}, max pause ${r.maxPauseSeconds} s, ${resumed}, recovery ${r.recoverySeconds} s`, ...timelines.map((n) => `  ${n}`)].join('\n')
    })
    .join('\n')
}

describe('npm run faults -- --brokers 3 --quick (broker kills and partitions)', () => {
  it(
    'passes a leader kill, a transaction coordinator kill, a lost broker, a zombie leader and the ingest partitioned from the cluster with nothing lost or duplicated',
    { timeout: 1_800_000 },
    async () => {
      // 9,500 events over rows weighted 0.2/0.15/0.2/0.2/0.2: 2,000 for each partition row, as when they ran on their own.
      const { exit, result } = await runFaults<SuiteResultFile>(['--brokers', '3', '--quick', '--scenarios', [...KILL_ROWS, ...PARTITION_ROWS].join(','), '--events', '9500', '--rate', '200', '--seed', '11'])
      // The figures behind the verdicts, for the test's log (the results file is removed).
      console.log(renderRows(result.rows))
      expect(result.options.brokers).toBe(3)
      expect(result.rows.map((r) => r.scenario)).toEqual([...KILL_ROWS, ...PARTITION_ROWS, 'whole-run'])
      for (const row of result.rows) expect(row.brokers, row.scenario).toBe(3)
      for (const row of result.rows.filter((r) => r.scenario !== 'whole-run')) {
        // A row that checked nothing, or whose fault was never made, would pass without proving anything.
        expect(row.events, row.scenario).toBeGreaterThan(100)
        expect(row.faultsInjected, row.scenario).toBe(1)
      }
      for (const row of result.rows.filter((r) => KILL_ROWS.includes(r.scenario))) {
        expect(row.notes.join(' '), row.scenario).toMatch(/broker \d \(/)
        expect(row.resumedAfterKillSeconds, row.scenario).toHaveLength(1)
        // The output flowed again after the kill, within the row's bound (60 s for a leader or
        // coordinator kill, 20 s for broker-lost): a row whose output never came back fails here.
        const [resumed] = row.resumedAfterKillSeconds
        expect(row.maxResumeSeconds, `${row.scenario}: the row has no resume bound`).toBeTypeOf('number')
        expect(resumed, `${row.scenario}: the output never flowed again after the kill\n${row.notes.join('\n')}`).toBeTypeOf('number')
        expect(resumed!, `${row.scenario}: the output flowed again ${resumed} s after the kill, bound ${row.maxResumeSeconds} s\n${row.notes.join('\n')}`).toBeLessThanOrEqual(row.maxResumeSeconds!)
      }
      for (const row of result.rows.filter((r) => PARTITION_ROWS.includes(r.scenario))) {
        expect(row.notes.join(' '), row.scenario).toMatch(/cut off from/)
        expect(row.resumedAfterHealSeconds?.length, row.scenario).toBe(1)
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
    },
  )
})
