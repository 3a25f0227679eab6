import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parser } from '@prometheus-io/lezer-promql'
import { freePort } from '@tep/local-stack'
import { waitFor } from '../support/wait-for.ts'
import { loadRules, prometheusPath, repoRoot, rulesFile } from './prometheus-tools.ts'

/** A real Prometheus (Debian package) on loopback, scraping the targets of a file_sd list, with the project's rules loaded. */
export class PrometheusServer {
  readonly url: string
  readonly dir: string
  private readonly child: ChildProcess

  private constructor(url: string, dir: string, child: ChildProcess) {
    this.url = url
    this.dir = dir
    this.child = child
  }

  static async start(options: { targetsFile: string; rulesFiles?: string[] }): Promise<PrometheusServer> {
    const dir = mkdtempSync(path.join(tmpdir(), 'tep-prometheus-'))
    const port = await freePort()
    const config = [
      'global:',
      '  scrape_interval: 2s',
      '  evaluation_interval: 2s',
      'rule_files:',
      ...(options.rulesFiles ?? [rulesFile]).map((f) => `  - ${JSON.stringify(f)}`),
      'scrape_configs:',
      '  - job_name: npm-start # each target group of the file sets its own job',
      '    file_sd_configs:',
      `      - files: [${JSON.stringify(options.targetsFile)}]`,
      '        refresh_interval: 2s',
      '',
    ].join('\n')
    writeFileSync(path.join(dir, 'prometheus.yml'), config)
    const log = createWriteStream(path.join(dir, 'prometheus.log'))
    const child = spawn(prometheusPath, [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout!.pipe(log)
    child.stderr!.pipe(log)
    const server = new PrometheusServer(`http://127.0.0.1:${port}`, dir, child)
    const exited = once(child, 'exit')
    await Promise.race([
      waitFor('Prometheus ready', async () => (await fetch(`${server.url}/-/ready`)).ok, { timeoutMs: 60_000, intervalMs: 250 }),
      exited.then(([code]) => {
        throw new Error(`prometheus exited with ${code}: ${readFileSync(path.join(dir, 'prometheus.log'), 'utf8').slice(-2000)}`)
      }),
    ])
    return server
  }

  async api<T>(endpoint: string, params: Record<string, string> = {}): Promise<T> {
    const res = await fetch(`${this.url}/api/v1/${endpoint}?${new URLSearchParams(params)}`)
    const body = (await res.json()) as { status: string; data: T; error?: string }
    if (body.status !== 'success') throw new Error(`${endpoint} ${JSON.stringify(params)}: ${body.error}`)
    return body.data
  }

  /** Instant query; the number of series returned. */
  async seriesCount(expr: string): Promise<number> {
    const data = await this.api<{ resultType: string; result: unknown[] }>('query', { query: expr })
    return data.resultType === 'scalar' ? 1 : data.result.length
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return
    this.child.kill('SIGTERM')
    await once(this.child, 'exit')
  }
}

export interface Query {
  /** Where the query comes from, e.g. `panel "Records per topic" A` or `alert TepIngestPaused`. */
  source: string
  expr: string
  /** Whether the whole expression must return series on a healthy running pipeline. */
  mustReturnSeries: boolean
}

/** Every panel query of the Grafana dashboard; every rule expression (recording rules must return series). */
export function dashboardQueries(file = path.join(repoRoot, 'deploy/grafana/dashboards/pipeline.json')): Query[] {
  const dashboard = JSON.parse(readFileSync(file, 'utf8')) as { panels: Array<{ title: string; type: string; targets?: Array<{ refId: string; expr: string }> }> }
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ source: `panel "${p.title}" ${t.refId}`, expr: t.expr, mustReturnSeries: true })))
}

export function ruleQueries(file = rulesFile): Query[] {
  // Alerts are quiet on a healthy pipeline: their expression must evaluate, and each selector must pass the selector check.
  return loadRules(file).map((r) => ({ source: r.alert ? `alert ${r.alert}` : `record ${r.record}`, expr: r.expr, mustReturnSeries: r.record !== undefined }))
}

/** Vector selectors of a PromQL expression (`metric{labels}`), found by the official PromQL grammar. */
export function selectorsOf(expr: string): { selectors: Array<{ text: string; metric: string }>; syntaxError: boolean } {
  const selectors: Array<{ text: string; metric: string }> = []
  let syntaxError = false
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) syntaxError = true
      if (node.name === 'VectorSelector') {
        const text = expr.slice(node.from, node.to)
        selectors.push({ text, metric: /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(text)?.[0] ?? '' })
      }
    },
  })
  return { selectors, syntaxError }
}

/**
 * Failure counters created by their first failure (prom-client emits a labelled
 * counter's samples only once a label set was incremented): on a healthy pipeline
 * their selectors return nothing, so for them the check is that Prometheus
 * scraped the metric's HELP/TYPE metadata from a target (the name exists).
 */
export const EVENT_ONLY_METRICS = new Set([
  'ingest_pauses_total',
  'tep_refresher_partition_pauses_total',
  'tep_refresher_records_dead_lettered_total',
  'tep_invalidation_poller_errors_total',
  'bank_sync_api_errors_total',
  'bank_sync_token_refreshes_total',
  'bank_sync_syncs_total',
  'ingest_api_request_duration_seconds_count',
  'tep_refresher_api_seconds_count',
  // Counted only when an API answers differently from the model; the simulators of `npm start`
  // answer as modelled unless --contract-drift is given, so a run may see none at all.
  'tep_api_contract_drift_total',
])

const BUILT_IN = new Set(['up', 'ALERTS', 'ALERTS_FOR_STATE'])

/**
 * Problems of `queries` against a running Prometheus: syntax errors, expressions
 * Prometheus refuses, selectors naming a metric no target exposes (a typo), and
 * expressions that must return series but return none.
 */
export async function checkQueries(prom: PrometheusServer, queries: Query[], recorded: Set<string>): Promise<string[]> {
  const problems: string[] = []
  const metadata = new Map<string, boolean>()
  const scraped = async (metric: string) => {
    if (!metadata.has(metric)) {
      const base = metric.replace(/_(bucket|count|sum)$/, '')
      const found = async (m: string) => (await prom.api<unknown[]>('targets/metadata', { metric: m })).length > 0
      metadata.set(metric, (await found(metric)) || (base !== metric && (await found(base))))
    }
    return metadata.get(metric)!
  }
  for (const q of queries) {
    const { selectors, syntaxError } = selectorsOf(q.expr)
    if (syntaxError) {
      problems.push(`${q.source}: PromQL syntax error in ${q.expr}`)
      continue
    }
    let count: number
    try {
      count = await prom.seriesCount(q.expr)
    } catch (err) {
      problems.push(`${q.source}: ${(err as Error).message}`)
      continue
    }
    for (const s of selectors) {
      if (BUILT_IN.has(s.metric)) continue
      if (s.metric.includes(':')) {
        if (!recorded.has(s.metric)) problems.push(`${q.source}: ${s.metric} is no recording rule`)
        continue
      }
      if ((await prom.seriesCount(s.text)) > 0) continue
      if (!(await scraped(s.metric))) problems.push(`${q.source}: no target exposes ${s.metric} (selector ${s.text})`)
      else if (!EVENT_ONLY_METRICS.has(s.metric)) problems.push(`${q.source}: ${s.text} selects no series although ${s.metric} exists`)
    }
    if (q.mustReturnSeries && count === 0) problems.push(`${q.source}: returns no series: ${q.expr}`)
  }
  return problems
}
