/**
 * The short version of `npm run faults`, so CI catches regressions: the whole
 * system (private broker and registry, both simulators, all four services as
 * processes) gets a few thousand raw events and one fault of each kind (a kill -9
 * of every service, a broker kill -9, a registry stop, enrichment and bank API
 * chaos, fuzzed input), and every row, checked by the independent read_committed
 * reader, must pass: nothing lost, nothing duplicated, nothing dead-lettered by a
 * fault, no secret in any log, OAuth state and bank 401 rules held.
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
const dir = mkdtempSync(path.join(tmpdir(), 'tep-faults-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Row {
  scenario: string
  events: number
  faultsInjected: number
  lost: number
  duplicated: number
  dlqFromFaults: number
  passed: boolean
  failures: string[]
}

describe('npm run faults --quick', () => {
  it('passes every row with one fault of each kind', { timeout: 900_000 }, async () => {
    const out = path.join(dir, 'latest.json')
    const child = run(process.execPath, ['tools/faults/src/main.ts', '--quick', '--events', '3000', '--rate', '300', '--seed', '7', '--out', out], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 })
    // Exit status 1 means a row failed: the rows below say which; anything else is a harness error.
    const exit = await child.then(
      () => 0,
      (err: { code?: number; stderr?: string }) => {
        if (err.code !== 1) throw new Error(`npm run faults exited ${err.code}: ${err.stderr?.slice(-3000)}`, { cause: err })
        return 1
      },
    )
    const result = JSON.parse(readFileSync(out, 'utf8')) as { rows: Row[]; passed: boolean }
    const rows = new Map(result.rows.map((r) => [r.scenario, r]))
    expect([...rows.keys()].sort()).toEqual(
      ['bank-401-first', 'bank-api-chaos', 'broker-restarts', 'enrichment-api-chaos', 'fuzzed-input', 'kill-services', 'oauth-state', 'registry-outage', 'secrets-not-logged', 'whole-run'],
    )
    for (const name of ['kill-services', 'broker-restarts', 'registry-outage', 'enrichment-api-chaos', 'bank-api-chaos', 'fuzzed-input']) {
      const row = rows.get(name)!
      // A row that checked nothing or injected nothing would pass without proving anything.
      expect(row.events, name).toBeGreaterThan(100)
      expect(row.faultsInjected, name).toBeGreaterThan(0)
    }
    const failed = result.rows.filter((r) => !r.passed).map((r) => `${r.scenario}: ${r.failures.join('; ')}`)
    expect(failed).toEqual([])
    expect(result.rows.map((r) => [r.scenario, r.lost, r.duplicated, r.dlqFromFaults])).toEqual(result.rows.map((r) => [r.scenario, 0, 0, 0]))
    expect(exit).toBe(0)
  })
})
