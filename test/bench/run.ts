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
import { fetchRuntime, freePort, startStack } from '@tep/local-stack'
import { createBenchAdmin, createSerde, repoRoot, type BenchContext } from './harness.ts'
import { SimDataset } from '@tep/sim-data'
import { eosPassThrough, kafkajsPassThrough, kstreamsEosPassThrough, naive, passThrough, type ThroughputResult } from './processors.ts'
import { crash, ingestThroughput, latency, startSim } from './scenarios.ts'
import { memoryInRounds, seedMemoryTables, seedTables, type TableTopics } from './table-scenarios.ts'
import { addRatios, renderTable, verdictRows, type ScenarioResults } from './verdicts.ts'
import { backfillScenario } from './backfill-scenario.ts'
import { isRoundScenario, medianRound, type RoundScenario } from './rounds.ts'

const ALL = ['passthrough', 'kafkajs-passthrough', 'kstreams-eos-passthrough', 'eos-passthrough', 'naive', 'ingest-batch', 'ingest-single', 'latency', 'crash', 'memory', 'backfill'] as const
type Scenario = (typeof ALL)[number]

const HELP = `usage: npm run bench [-- options]

Scenarios (default: all, in this order): ${ALL.join(', ')}
passthrough (a zero-work consumer and producer on @platformatic/kafka, the
services' client), kstreams-eos-passthrough (Kafka Streams 4, exactly_once_v2,
identity topology; built with Maven on first use) and naive (one await per
message) are the baselines of the ratios; kafkajs-passthrough is the zero-work
pass-through on KafkaJS, for reference. eos-passthrough and the ingest run
@tep/kafka's exactly-once loop. Every throughput row is timed the same way:
from the processor saying it consumes to the moment the read-committed end
offsets of its outputs covered the input. backfill: 200,000 file rows through
npm run backfill while live traffic runs at 500 ev/s. All figures come from one
run (ratios, not absolutes: the machine is shared).
Uses KAFKA_BROKERS/SCHEMA_REGISTRY_URL when set, otherwise a private local stack.

options:
  --scenarios a,b       run only these
  --events N            events per throughput scenario (default 50000)
  --rounds N            rounds of the pass-through rows (passthrough, kafkajs-passthrough,
                        kstreams-eos-passthrough, eos-passthrough), alternated, each row's
                        median round reported and every round listed (default 3): a shared
                        machine's speed drifts within minutes, and rows measured once each
                        compared its moments more than the processors
  --naive-events N      events for the naive consumer (default 1500; it is slow by design)
  --latency-rate N      events per second for the latency run (default 1000)
  --latency-seconds N   measured length of the latency run (default 20)
  --latency-warmup-seconds N
                        seconds at the same rate before the measured ones (default 5): the
                        first seconds of a fresh process pay for the JIT and new connections
                        (p99 of everything is reported too, as p99MsWithWarmup)
  --crash-events N      events of the crash run (default 100000)
  --kills N             kill -9 of the ingest process during the crash run (default 3)
  --memory-shops N      shops in the table for the memory run (cold load, then a warm restart from
                        the table checkpoint), merchants = N/10 (default 1000000;
                        --memory-shops 5000000 for the 5M goal: seeding it takes minutes)
  --memory-skip-avsc    skip the memory run's comparison cold load through avsc
                        (INGEST_TABLE_TRANSCODE=false; at 5M it adds a minute or more)
  --memory-rounds N     rounds of the memory run on the same topics (default 1): the first
                        round's figures reported, every round listed
  --api-latency-ms N    simulated enrichment API latency (default 3)
  --brokers N           Kafka nodes of the private stack: 1 (default) or 3, a KRaft cluster with
                        replication factor 3 and min.insync.replicas 2 (the cost of replication)
  --out DIR             where results go (default bench-results)
  -h, --help            this text

Writes <out>/<time>.json and <out>/latest.json: results.<scenario> holds the
scenario's figures (eventsPerSecond, cpuUsPerEvent, ratioToPassthrough,
ratioToKafkaStreamsEos, ...).`

const say = (line: string) => process.stderr.write(`${line}\n`)

function num(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined) return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${raw}`)
  return n
}

function list<T extends string>(raw: string | undefined, known: readonly T[], fallback: readonly T[], name: string): T[] {
  const chosen = (raw?.split(',').map((s) => s.trim()).filter(Boolean) ?? [...fallback]) as T[]
  const unknown = chosen.filter((s) => !known.includes(s))
  if (unknown.length) throw new Error(`unknown ${name} ${unknown.join(', ')}; known: ${known.join(', ')}`)
  if (chosen.length === 0) throw new Error(`--${name} names nothing`)
  return [...new Set(chosen)]
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
      'latency-warmup-seconds': { type: 'string' },
      'crash-events': { type: 'string' },
      kills: { type: 'string' },
      'memory-shops': { type: 'string' },
      'memory-skip-avsc': { type: 'boolean' },
      'memory-rounds': { type: 'string' },
      'api-latency-ms': { type: 'string' },
      rounds: { type: 'string' },
      brokers: { type: 'string' },
      out: { type: 'string' },
    },
  })
  if (values.help) {
    process.stdout.write(`${HELP}\n`)
    return 0
  }
  const chosen = list<Scenario>(values.scenarios, ALL, ALL, 'scenarios')
  const events = num(values.events, 50_000, 'events')
  const naiveEvents = num(values['naive-events'], 1_500, 'naive-events')
  const latencyRate = num(values['latency-rate'], 1_000, 'latency-rate')
  const latencySeconds = num(values['latency-seconds'], 20, 'latency-seconds')
  const latencyWarmup = num(values['latency-warmup-seconds'], 5, 'latency-warmup-seconds')
  const crashEvents = num(values['crash-events'], 100_000, 'crash-events')
  const kills = num(values.kills, 3, 'kills')
  const memoryShops = num(values['memory-shops'], 1_000_000, 'memory-shops')
  const memoryRounds = num(values['memory-rounds'], 1, 'memory-rounds')
  if (!Number.isInteger(memoryRounds)) throw new Error(`--memory-rounds must be a whole number, got ${values['memory-rounds']}`)
  const apiLatency = Number(values['api-latency-ms'] ?? '3')
  const rounds = num(values.rounds, 3, 'rounds')
  if (!Number.isInteger(rounds)) throw new Error(`--rounds must be a whole number, got ${values.rounds}`)
  const brokerCount = num(values.brokers, 1, 'brokers')
  if (brokerCount !== 1 && brokerCount !== 3) throw new Error(`--brokers must be 1 or 3, got ${values.brokers}`)
  const outDir = path.resolve(repoRoot, values.out ?? 'bench-results')

  let stopStack = async () => {}
  let brokers = process.env.KAFKA_BROKERS?.split(',')
  let registryUrl = process.env.SCHEMA_REGISTRY_URL
  if (!brokers || !registryUrl) {
    await fetchRuntime({ log: say })
    say(`starting a private Kafka ${brokerCount === 1 ? 'broker' : `cluster of ${brokerCount} brokers`} and schema registry ...`)
    const stack = await startStack({ stateDir: path.join(repoRoot, '.local', 'bench', 'stack'), brokers: brokerCount })
    brokers = stack.brokers
    registryUrl = stack.registryUrl
    stopStack = () => stack.stop()
  }
  const kafka = createKafka({ brokers, clientId: 'bench' })
  const admin = createBenchAdmin(brokers)
  const runId = Date.now().toString(36)
  const ctx: BenchContext = { kafka, admin, brokers, registryUrl, serde: createSerde(registryUrl), runId, logDir: path.join(repoRoot, '.local', 'bench'), say }
  const sim = await startSim(ctx, await freePort(), apiLatency)
  const results: ScenarioResults = {}
  let naiveResult: { eventsPerSecond: number; cpuUsPerEvent: number } | undefined
  const failures: string[] = []
  const started = new Date()
  let tables: TableTopics | undefined
  let memoryTables: TableTopics | undefined
  // The ingest scenarios run against a warm table (steady state): the simulator's
  // shops and merchants already on the compacted topics, as the refresher keeps them.
  const warmTables = async () => {
    if (!tables) {
      say('  seeding the shop/merchant table topics with the simulator data set ...')
      tables = await seedTables(ctx, 'table', new SimDataset())
    }
    return tables
  }
  const stamp = started.toISOString().replace(/[:.]/g, '-')
  /** Written after every scenario too, so a run cut short keeps what it measured (`complete: false`). */
  const writeReport = (complete: boolean) => {
    addRatios(results, naiveResult)
    const rows = verdictRows(results, naiveResult)
    const report = {
      startedAt: started.toISOString(),
      complete,
      machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGb: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.release()}`, loadAverage: os.loadavg().map((l) => Math.round(l * 10) / 10) },
      settings: { brokers: process.env.KAFKA_BROKERS ? brokers.length : brokerCount, events, rounds, naiveEvents, latencyRate, latencySeconds, latencyWarmupSeconds: latencyWarmup, crashEvents, kills, memoryShops, memoryRounds, apiLatencyMs: apiLatency },
      results,
      failures,
      table: rows,
    }
    mkdirSync(outDir, { recursive: true })
    writeFileSync(path.join(outDir, `${stamp}.json`), JSON.stringify(report, null, 2))
    writeFileSync(path.join(outDir, 'latest.json'), JSON.stringify(report, null, 2))
    return rows
  }
  /** One failing scenario must not lose the others' figures: its failure is recorded and the run goes on. */
  const recordFailure = (scenario: Scenario, err: unknown) => {
    const message = `${scenario}: ${(err as Error).message}`
    failures.push(message)
    results[scenario] = { failed: (err as Error).message }
    say(`  FAILED ${message}`)
    if (process.env.BENCH_DEBUG === 'true') say(String((err as Error).stack))
  }
  // Typed by the rows of rounds.ts, so a row added there without its processor here does not compile.
  const passThroughRow: Record<RoundScenario, (c: BenchContext, count: number, name: string) => Promise<ThroughputResult>> = {
    passthrough: passThrough,
    'kafkajs-passthrough': kafkajsPassThrough,
    'kstreams-eos-passthrough': kstreamsEosPassThrough,
    'eos-passthrough': eosPassThrough,
  }
  /**
   * The pass-through rows, alternated: round 1 of each row, then round 2 of each...
   * A row that fails in a round is recorded as failed and left out of the later rounds.
   */
  const runRounds = async (rows: RoundScenario[]) => {
    const measured = new Map(rows.map((r) => [r, [] as ThroughputResult[]]))
    for (let round = 1; round <= rounds; round++) {
      for (const scenario of rows) {
        if (results[scenario] !== undefined) continue
        say(`▶ ${scenario}${rounds > 1 ? ` (round ${round} of ${rounds})` : ''}`)
        const t0 = Date.now()
        try {
          // Fresh topics and group per round (their names carry the round).
          const result = await passThroughRow[scenario](ctx, events, round === 1 ? scenario : `${scenario}-r${round}`)
          measured.get(scenario)!.push(result)
          say(`  ${JSON.stringify(result)} (${((Date.now() - t0) / 1000).toFixed(0)} s)`)
        } catch (err) {
          recordFailure(scenario, err)
        }
      }
    }
    for (const [scenario, list] of measured) if (results[scenario] === undefined && list.length > 0) results[scenario] = { ...medianRound(list) }
    if (rounds > 1) for (const scenario of rows) if (!('failed' in (results[scenario] ?? {}))) say(`  ${scenario}: median of ${rounds} rounds ${JSON.stringify(results[scenario])}`)
    writeReport(false)
  }
  try {
    for (const scenario of chosen) {
      if (isRoundScenario(scenario)) {
        // The whole group runs at the place of its first row.
        if (results[scenario] === undefined) await runRounds(chosen.filter(isRoundScenario))
        continue
      }
      say(`▶ ${scenario}`)
      const t0 = Date.now()
      const port = await freePort()
      try {
        let result: Record<string, unknown>
        switch (scenario) {
          case 'naive':
            naiveResult = await naive(ctx, sim, naiveEvents)
            result = { ...naiveResult }
            break
          case 'ingest-batch':
            result = { ...(await ingestThroughput(ctx, sim, await warmTables(), events, 'batch', port)) }
            break
          case 'ingest-single':
            result = { ...(await ingestThroughput(ctx, sim, await warmTables(), events, 'single', port)) }
            break
          case 'latency':
            result = { ...(await latency(ctx, sim, await warmTables(), latencyRate, latencySeconds, port, latencyWarmup)) }
            break
          case 'crash':
            result = { ...(await crash(ctx, sim, await warmTables(), crashEvents, kills, port)) }
            break
          case 'memory':
            if (!memoryTables) {
              say(`  producing ${memoryShops} shops and ${Math.round(memoryShops / 10)} merchants to the memory run's table topics ...`)
              memoryTables = await seedMemoryTables(ctx, memoryShops)
            }
            result = { ...(await memoryInRounds(ctx, sim, memoryShops, port, memoryTables, !values['memory-skip-avsc'], memoryRounds)) }
            break
          case 'backfill':
            result = { ...(await backfillScenario(ctx, sim, warmTables, port)) }
            break
        }
        results[scenario] = result
        say(`  ${JSON.stringify(result)} (${((Date.now() - t0) / 1000).toFixed(0)} s)`)
      } catch (err) {
        recordFailure(scenario, err)
      }
      writeReport(false)
    }
  } finally {
    await sim.stop()
    await admin.close()
    await stopStack()
  }

  const rows = writeReport(true)
  process.stdout.write(`${renderTable(rows)}\n\n${failures.length ? `failed: ${failures.join('; ')}\n` : ''}results: ${path.relative(repoRoot, path.join(outDir, `${stamp}.json`))}\n`)
  return failures.length ? 1 : 0
}

try {
  process.exitCode = await main()
} catch (err) {
  say(`bench failed: ${(err as Error).message}`)
  process.exitCode = 1
}
process.exit()
