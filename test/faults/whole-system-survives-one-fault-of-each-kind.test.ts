/**
 * The short version of `npm run faults`, so CI catches regressions: the whole
 * system (private broker and registry, both simulators, all four services as
 * processes) gets a few thousand raw events and one fault of each kind (a kill -9
 * of every service, a broker kill -9, a registry stop, enrichment and bank API
 * chaos, fuzzed input), and every row, checked by the independent read_committed
 * reader, must pass: nothing lost, nothing duplicated, nothing dead-lettered by a
 * fault, no secret in any log, OAuth state and bank 401 rules held.
 */
import type { SuiteResultFile } from '@tep/faults'
import { describe, expect, it } from 'vitest'
import { runFaults } from './faults-cli.ts'

describe('npm run faults --quick', () => {
  it('passes every row with one fault of each kind', { timeout: 900_000 }, async () => {
    const { exit, result } = await runFaults<SuiteResultFile>(['--quick', '--events', '3000', '--rate', '300', '--seed', '7'])
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
