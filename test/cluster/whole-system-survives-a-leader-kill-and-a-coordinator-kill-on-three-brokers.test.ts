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
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const dir = mkdtempSync(path.join(tmpdir(), 'tep-cluster-faults-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Row {
  scenario: string
  brokers: number
  events: number
  faultsInjected: number
  lost: number
  duplicated: number
  dlqFromFaults: number
  maxPauseSeconds: number
  resumedAfterKillSeconds: Array<number | null>
  brokerBackAfterKillSeconds: number[]
  passed: boolean
  failures: string[]
  notes: string[]
}

describe('npm run faults -- --brokers 3 --quick', () => {
  it('passes a leader kill, a transaction coordinator kill and a lost broker with nothing lost or duplicated', { timeout: 900_000 }, async () => {
    const out = path.join(dir, 'latest.json')
    const args = ['tools/faults/src/main.ts', '--brokers', '3', '--quick', '--scenarios', 'leader-kill,txn-coordinator-kill,broker-lost', '--events', '4000', '--rate', '300', '--seed', '11', '--out', out]
    const exit = await run(process.execPath, args, { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 }).then(
      () => 0,
      (err: { code?: number; stderr?: string }) => {
        // 1: a row failed (the rows say which); anything else is a harness error.
        if (err.code !== 1) throw new Error(`npm run faults exited ${err.code}: ${err.stderr?.slice(-3000)}`, { cause: err })
        return 1
      },
    )
    const result = JSON.parse(readFileSync(out, 'utf8')) as { rows: Row[]; options: { brokers: number } }
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
