import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { StartProcess } from '../start/start-process.ts'
import { waitFor } from '../support/wait-for.ts'
import { loadRules, repoRoot } from './prometheus-tools.ts'
import { checkQueries, dashboardQueries, PrometheusServer, ruleQueries, type Query } from './prometheus-server.ts'

const JOBS = ['transaction-ingest', 'refresher', 'invalidation-poller', 'bank-sync', 'pipeline-exporter']
const recorded = new Set(loadRules().flatMap((r) => (r.record ? [r.record] : [])))

// The pipeline as `npm start` runs it (its own processes on loopback) scraped by
// a real Prometheus through the file_sd list npm start writes; every panel of the
// Grafana dashboard and every rule is evaluated through the HTTP API.
describe('the Grafana dashboard and the Prometheus rules on a real Prometheus scraping the running pipeline', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tep-ops-'))
  const targetsFile = path.join(dir, 'targets.json')
  const start = new StartProcess(['--rate', '20', '--interval', '2', '--duration', '600', '--exporter-port', '0', '--targets-file', targetsFile])
  let prom: PrometheusServer

  beforeAll(async () => {
    await start.next((s) => Object.values(s.services).every((v) => v.ready !== false) && (s.counts['transactions.enriched.v1'] ?? 0) > 0, 'every service ready and enriched events flowing')
    prom = await PrometheusServer.start({ targetsFile })
    await waitFor(
      'every npm start target up in Prometheus',
      async () => {
        const { activeTargets } = await prom.api<{ activeTargets: Array<{ labels: { job: string }; health: string }> }>('targets')
        return JOBS.every((job) => activeTargets.some((t) => t.labels.job === job && t.health === 'up'))
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    )
  }, 300_000)
  afterAll(async () => {
    await prom?.stop()
    await start.stop()
  })

  it('every panel query and every rule expression evaluates, names only scraped metrics, and returns series where it must', async () => {
    const queries: Query[] = [...dashboardQueries(), ...ruleQueries()]
    expect(queries.length).toBeGreaterThan(40)
    // Rates need two scrapes and the bank's first sync some seconds: wait until the check passes, then keep its verdict.
    let problems: string[] = []
    await waitFor(
      'all queries to pass',
      async () => {
        problems = await checkQueries(prom, queries, recorded)
        return problems.length === 0
      },
      { timeoutMs: 120_000, intervalMs: 2_000 },
    ).catch(() => undefined)
    expect(problems).toEqual([])
    // The recording rules ran in Prometheus too (rule groups evaluate every 2 s here).
    for (const name of recorded) expect(await prom.seriesCount(name), name).toBeGreaterThan(0)
  }, 180_000)

  it('fails a dashboard whose panel names a metric with a typo', async () => {
    const file = path.join(dir, 'dashboard-with-typo.json')
    const text = readFileSync(path.join(repoRoot, 'deploy/grafana/dashboards/pipeline.json'), 'utf8')
    writeFileSync(file, text.replace('sum by (outcome) (rate(ingest_records_out_total[1m]))', 'sum by (outcome) (rate(ingest_record_out_total[1m]))'))
    const problems = await checkQueries(prom, dashboardQueries(file), recorded)
    expect(problems).toEqual(['panel "Ingest results by outcome" A: no target exposes ingest_record_out_total (selector ingest_record_out_total)', 'panel "Ingest results by outcome" A: returns no series: sum by (outcome) (rate(ingest_record_out_total[1m]))'])
  })

  it('fails an alert that names a metric with a typo, even one hidden behind "or vector(0)" or a failure counter', async () => {
    const problems = await checkQueries(
      prom,
      [
        { source: 'alert Typo', expr: 'max by (instance) (ingest_partition_paused) > 0', mustReturnSeries: false },
        { source: 'panel Hidden', expr: 'sum by (reason) (increase(ingest_pause_total[5m])) or on() vector(0)', mustReturnSeries: true },
        { source: 'alert Label', expr: 'sum(rate(ingest_records_out_total{outcome="DQL"}[5m])) > 0', mustReturnSeries: false },
      ],
      recorded,
    )
    expect(problems).toEqual([
      'alert Typo: no target exposes ingest_partition_paused (selector ingest_partition_paused)',
      'panel Hidden: no target exposes ingest_pause_total (selector ingest_pause_total)',
      'alert Label: ingest_records_out_total{outcome="DQL"} selects no series although ingest_records_out_total exists',
    ])
  })
})
