/**
 * `npm run bench`: measures the pipeline against the targets of ARCHITECTURE.md §8
 * on this machine, everything local, all figures from one run. Writes
 * bench-results/<time>.json and bench-results/latest.json and prints a table.
 * Benchmarks measure; they never fail a build (tests never assert speed).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createKafka } from '@tep/kafka'
import { fetchRuntime, startStack } from '@tep/local-stack'
import { createSerde, repoRoot, type BenchContext } from './harness.ts'
import { SimDataset } from '@tep/sim-data'
import { crash, ingestThroughput, latency, memory, naive, passThrough, seedTables, startSim, type TableTopics } from './scenarios.ts'
import { freePort } from '../../scripts/start/free-port.ts'
import { backfillScenario } from './backfill-scenario.ts'

const ALL = ['passthrough', 'naive', 'ingest-batch', 'ingest-single', 'latency', 'crash', 'memory', 'backfill'] as const
type Scenario = (typeof ALL)[number]

const HELP = `usage: npm run bench [-- options]

Scenarios (default: all, in this order): ${ALL.join(', ')}
Uses KAFKA_BROKERS/SCHEMA_REGISTRY_URL when set, otherwise a private local stack.

options:
  --scenarios a,b       run only these
  --events N            events per throughput scenario (default 50000)
  --naive-events N      events for the naive consumer (default 1500; it is slow by design)
  --latency-rate N      events per second for the latency run (default 1000)
  --latency-seconds N   length of the latency run (default 20)
  --crash-events N      events of the crash run (default 100000)
  --kills N             kill -9 of the ingest process during the crash run (default 3)
  --memory-shops N      shops in the table for the memory run (default 1000000)
  --api-latency-ms N    simulated enrichment API latency (default 3)
  --out DIR             where results go (default bench-results)
  -h, --help            this text`

const say = (line: string) => process.stderr.write(`${line}\n`)

function num(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined) return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${raw}`)
  return n
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      help: { type: 'boolean', short: 'h' },
      scenarios: { type: 'string' },
      events: { type: 'string' },
      'naive-events': { type: 'string' },
      'latency-rate': { type: 'string' },
      'latency-seconds': { type: 'string' },
      'crash-events': { type: 'string' },
      kills: { type: 'string' },
      'memory-shops': { type: 'string' },
      'api-latency-ms': { type: 'string' },
      out: { type: 'string' },
    },
  })
  if (values.help) {
    process.stdout.write(`${HELP}\n`)
    return 0
  }
  const chosen = (values.scenarios?.split(',').map((s) => s.trim()) ?? [...ALL]) as Scenario[]
  const unknown = chosen.filter((s) => !ALL.includes(s))
  if (unknown.length) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${ALL.join(', ')}`)
  const events = num(values.events, 50_000, 'events')
  const naiveEvents = num(values['naive-events'], 1_500, 'naive-events')
  const latencyRate = num(values['latency-rate'], 1_000, 'latency-rate')
  const latencySeconds = num(values['latency-seconds'], 20, 'latency-seconds')
  const crashEvents = num(values['crash-events'], 100_000, 'crash-events')
  const kills = num(values.kills, 3, 'kills')
  const memoryShops = num(values['memory-shops'], 1_000_000, 'memory-shops')
  const apiLatency = Number(values['api-latency-ms'] ?? '3')
  const outDir = path.resolve(repoRoot, values.out ?? 'bench-results')

  let stopStack = async () => {}
  let brokers = process.env.KAFKA_BROKERS?.split(',')
  let registryUrl = process.env.SCHEMA_REGISTRY_URL
  if (!brokers || !registryUrl) {
    await fetchRuntime({ log: say })
    say('starting a private Kafka broker and schema registry ...')
    const stack = await startStack({ stateDir: path.join(repoRoot, '.local', 'bench', 'stack') })
    brokers = stack.brokers
    registryUrl = stack.registryUrl
    stopStack = () => stack.stop()
  }
  const kafka = createKafka({ brokers, clientId: 'bench' })
  const admin = kafka.admin()
  await admin.connect()
  const runId = Date.now().toString(36)
  const ctx: BenchContext = { kafka, admin, brokers, registryUrl, serde: createSerde(registryUrl), runId, logDir: path.join(repoRoot, '.local', 'bench'), say }
  const sim = await startSim(ctx, await freePort(), apiLatency)
  const results: Record<string, unknown> = {}
  const started = new Date()
  let tables: TableTopics | undefined
  // The ingest scenarios run against a warm table (steady state): the simulator's
  // shops and merchants already on the compacted topics, as the refresher keeps them.
  const warmTables = async () => {
    if (!tables) {
      say('  seeding the shop/merchant table topics with the simulator data set ...')
      tables = await seedTables(ctx, 'table', new SimDataset())
    }
    return tables
  }
  try {
    for (const scenario of chosen) {
      say(`▶ ${scenario}`)
      const t0 = Date.now()
      const port = await freePort()
      switch (scenario) {
        case 'passthrough':
          results.passthrough = await passThrough(ctx, events)
          break
        case 'naive':
          results.naive = await naive(ctx, sim, naiveEvents)
          break
        case 'ingest-batch':
          results.ingestBatch = await ingestThroughput(ctx, sim, await warmTables(), events, 'batch', port)
          break
        case 'ingest-single':
          results.ingestSingle = await ingestThroughput(ctx, sim, await warmTables(), events, 'single', port)
          break
        case 'latency':
          results.latency = await latency(ctx, sim, await warmTables(), latencyRate, latencySeconds, port)
          break
        case 'crash':
          results.crash = await crash(ctx, sim, await warmTables(), crashEvents, kills, port)
          break
        case 'memory':
          results.memory = await memory(ctx, sim, memoryShops, port)
          break
        case 'backfill':
          results.backfill = await backfillScenario(ctx, sim, warmTables, port)
          break
      }
      say(`  ${JSON.stringify(results[scenario === 'ingest-batch' ? 'ingestBatch' : scenario === 'ingest-single' ? 'ingestSingle' : scenario])} (${((Date.now() - t0) / 1000).toFixed(0)} s)`)
    }
  } finally {
    await sim.stop()
    await admin.disconnect()
    await stopStack()
  }

  const report = {
    startedAt: started.toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGb: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.release()}` },
    settings: { events, naiveEvents, latencyRate, latencySeconds, crashEvents, kills, memoryShops, apiLatencyMs: apiLatency },
    results,
    verdicts: verdicts(results),
  }
  mkdirSync(outDir, { recursive: true })
  const stamp = started.toISOString().replace(/[:.]/g, '-')
  writeFileSync(path.join(outDir, `${stamp}.json`), JSON.stringify(report, null, 2))
  writeFileSync(path.join(outDir, 'latest.json'), JSON.stringify(report, null, 2))
  process.stdout.write(`${table(report.verdicts)}\n\nresults: ${path.relative(repoRoot, path.join(outDir, `${stamp}.json`))}\n`)
  return 0
}

interface Verdict {
  figure: string
  measured: string
  target: string
  met: boolean | null
}

type Tp = { eventsPerSecond: number } | undefined

function verdicts(r: Record<string, unknown>): Verdict[] {
  const pass = (r.passthrough as Tp)?.eventsPerSecond
  const out: Verdict[] = []
  const ratio = (v: number | undefined, base: number | undefined) => (v && base ? v / base : undefined)
  const batch = (r.ingestBatch as Tp)?.eventsPerSecond
  const single = (r.ingestSingle as Tp)?.eventsPerSecond
  const naiveTp = (r.naive as Tp)?.eventsPerSecond
  if (pass) out.push({ figure: 'zero-work KafkaJS pass-through', measured: `${pass} ev/s`, target: 'baseline', met: null })
  if (naiveTp) out.push({ figure: 'naive one-await-per-message consumer', measured: `${naiveTp} ev/s`, target: 'baseline', met: null })
  const rb = ratio(batch, pass)
  if (batch) out.push({ figure: 'ingest, batch findBy', measured: `${batch} ev/s${rb ? ` = ${rb.toFixed(2)}× pass-through` : ''}`, target: '≥ 0.5× pass-through', met: rb === undefined ? null : rb >= 0.5 })
  const rs = ratio(single, pass)
  const rn = ratio(single, naiveTp)
  if (single)
    out.push({
      figure: 'ingest, one findBy per event',
      measured: `${single} ev/s${rs ? ` = ${rs.toFixed(2)}× pass-through` : ''}${rn ? `, ${rn.toFixed(0)}× naive` : ''}`,
      target: '≥ 0.25× pass-through and ≥ 30× naive',
      met: rs === undefined || rn === undefined ? null : rs >= 0.25 && rn >= 30,
    })
  const lat = r.latency as { p99Ms: number; p50Ms: number; targetRate: number } | undefined
  if (lat) out.push({ figure: `end-to-end latency at ${lat.targetRate} ev/s`, measured: `p50 ${lat.p50Ms} ms, p99 ${lat.p99Ms} ms`, target: 'p99 ≤ 100 ms', met: lat.p99Ms <= 100 })
  const c = r.crash as { events: number; kills: number; lost: number; duplicated: number } | undefined
  if (c) out.push({ figure: `kill -9 ×${c.kills} during ${c.events} events`, measured: `${c.lost} lost, ${c.duplicated} duplicated`, target: '0 lost, 0 duplicated', met: c.lost === 0 && c.duplicated === 0 })
  const m = r.memory as { shops: number; rssMb: number; peakRssMb: number } | undefined
  if (m) out.push({ figure: `ingest RSS with ${m.shops} shops in its table`, measured: `${m.rssMb} MB (peak ${m.peakRssMb} MB)`, target: '< 300 MB', met: m.rssMb < 300 })
  return out
}

function table(rows: Verdict[]): string {
  const head = ['figure', 'measured', 'target', 'met']
  const cells = rows.map((v) => [v.figure, v.measured, v.target, v.met === null ? '' : v.met ? 'yes' : 'NO'])
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i]!)).join(' | ')} |`
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n')
}

try {
  process.exitCode = await main()
} catch (err) {
  say(`bench failed: ${(err as Error).message}`)
  process.exitCode = 1
}
process.exit()
