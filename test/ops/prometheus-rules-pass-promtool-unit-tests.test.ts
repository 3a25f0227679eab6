import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { checkAndTestRules, copyWithEditedRules, loadRules, prometheusDir } from './prometheus-tools.ts'

describe('deploy/prometheus rules', () => {
  it('pass promtool check and promtool unit tests', () => {
    const run = checkAndTestRules()
    expect(run.output).toContain('SUCCESS')
    expect(run.ok, run.output).toBe(true)
  })

  it('fail the unit tests when an alert reads a mistyped metric name', () => {
    // ingest_partitions_paused -> ingest_partition_paused: valid PromQL, but the series never exists.
    const copy = copyWithEditedRules((rules) => rules.replace('max by (instance) (ingest_partitions_paused)', 'max by (instance) (ingest_partition_paused)'))
    const run = checkAndTestRules(copy)
    expect(run.ok).toBe(false)
    expect(run.output).toContain('alertname: TepIngestPaused')
  })

  it('fail the unit tests when a recording rule reads a mistyped metric name', () => {
    const copy = copyWithEditedRules((rules) => rules.replace('sum by (group) (tep_consumergroup_lag)', 'sum by (group) (tep_consumer_group_lag)'))
    const run = checkAndTestRules(copy)
    expect(run.ok).toBe(false)
    expect(run.output).toContain('tep:consumergroup_lag:sum')
  })

  it('have a unit test in which every alert fires', () => {
    const alerts = loadRules().flatMap((r) => (r.alert ? [r.alert] : []))
    const tests = parse(readFileSync(path.join(prometheusDir, 'tests/pipeline.rules.test.yml'), 'utf8')) as {
      tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts: unknown[] }> }>
    }
    const firing = new Set(tests.tests.flatMap((t) => (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)))
    expect(alerts.length).toBeGreaterThan(10)
    expect(alerts.filter((a) => !firing.has(a))).toEqual([])
  })
})
