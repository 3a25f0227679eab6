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
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const dir = mkdtempSync(path.join(tmpdir(), 'tep-partition-faults-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Row {
  scenario: string
  brokers: number
  events: number
  faultsInjected: number
  lost: number
  duplicated: number
  dlqFromFaults: number
  resumedAfterHealSeconds?: Array<number | null>
  passed: boolean
  failures: string[]
  notes: string[]
}

const ROWS = ['partition-service-from-cluster', 'partition-leader-from-quorum']

describe('npm run faults -- --brokers 3 --quick (partitions)', () => {
  it('passes the ingest partitioned from the cluster and a zombie leader with nothing lost or duplicated and output back within 60 s of each heal', { timeout: 1_200_000 }, async () => {
    const out = path.join(dir, 'latest.json')
    const args = ['tools/faults/src/main.ts', '--brokers', '3', '--quick', '--scenarios', ROWS.join(','), '--events', '4000', '--rate', '200', '--seed', '35', '--out', out]
    const exit = await run(process.execPath, args, { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 }).then(
      () => 0,
      (err: { code?: number; stderr?: string }) => {
        // 1: a row failed (the rows say which); anything else (2: no root, no iptables) is a harness error.
        if (err.code !== 1) throw new Error(`npm run faults exited ${err.code}: ${err.stderr?.slice(-3000)}`, { cause: err })
        return 1
      },
    )
    const result = JSON.parse(readFileSync(out, 'utf8')) as { rows: Row[] }
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
