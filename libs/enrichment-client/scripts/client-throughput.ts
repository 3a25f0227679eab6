/**
 * Micro-benchmark of the enrichment client's own cost per request.
 *
 * The simulator runs in a CHILD process so that its CPU is not charged to the
 * client; this process runs, in interleaved rounds, the same lookups through
 *   - raw undici `request` (the floor: what the transport alone costs),
 *   - `EnrichmentClient.findByCardTransaction`,
 *   - raw undici batch POSTs and `EnrichmentClient.findByCardTransactionBatch`,
 * each with the same number of concurrent workers, and prints requests/s and
 * CPU time of this process per request (process.cpuUsage). On a loaded machine
 * the absolute rates move; the ratios between interleaved rounds are the figure.
 *
 *   npm exec -- node libs/enrichment-client/scripts/client-throughput.ts --help
 *
 * Profile the client with
 *   npm exec -- node --cpu-prof --cpu-prof-dir=/tmp/prof \
 *     libs/enrichment-client/scripts/client-throughput.ts --only client --rounds 1
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Agent, request } from 'undici'
import { EnrichmentClient, type CardTransactionInput } from '../src/index.ts'

const USAGE = `usage: node libs/enrichment-client/scripts/client-throughput.ts [options]

Starts the enrichment simulator in a child process and compares raw undici with
the enrichment client, single lookups and batches, in interleaved rounds.

options:
  --concurrency N   concurrent workers for single lookups (default 64)
  --batch-concurrency N  concurrent workers for batches (default 8)
  --batch-size N    transactions per batch (default 100)
  --duration-ms N   length of each measured run (default 4000)
  --warmup-ms N     unmeasured run before the first round of each scenario (default 1500)
  --rounds N        interleaved rounds (default 3)
  --latency-ms N    simulated API latency (default 3)
  --shops N         simulator data set size (default 20000)
  --only LIST       comma-separated scenarios: raw, client, raw-batch, client-batch
                    (default all; with --baseline also baseline, baseline-batch)
  --baseline DIR    also run the enrichment client of another source tree (before/after
                    comparisons in the same run), e.g. an older commit exported with
                    git archive HEAD~3 libs/http libs/enrichment-client | tar -x -C DIR,
                    with DIR/node_modules linked to this repository's node_modules and
                    '@tep/http' imports in DIR rewritten to DIR/libs/http/src/index.ts
  -h, --help        this text`

const { values: args } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '64' },
    'batch-concurrency': { type: 'string', default: '8' },
    'batch-size': { type: 'string', default: '100' },
    'duration-ms': { type: 'string', default: '4000' },
    'warmup-ms': { type: 'string', default: '1500' },
    rounds: { type: 'string', default: '3' },
    'latency-ms': { type: 'string', default: '3' },
    shops: { type: 'string', default: '20000' },
    only: { type: 'string' },
    baseline: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (args.help) {
  process.stdout.write(`${USAGE}\n`)
  process.exit(0)
}

function positive(name: string, raw: string): number {
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(
      `client-throughput: --${name} must be a positive integer, got ${JSON.stringify(raw)}\n`,
    )
    process.exit(2)
  }
  return n
}
const concurrency = positive('concurrency', args.concurrency)
const batchConcurrency = positive('batch-concurrency', args['batch-concurrency'])
const batchSize = positive('batch-size', args['batch-size'])
const durationMs = positive('duration-ms', args['duration-ms'])
const warmupMs = args['warmup-ms'] === '0' ? 0 : positive('warmup-ms', args['warmup-ms'])
const rounds = positive('rounds', args.rounds)
const shops = positive('shops', args.shops)
const latencyMs = args['latency-ms']
const SCENARIOS = ['raw', 'client', 'baseline', 'raw-batch', 'client-batch', 'baseline-batch'] as const
type Scenario = (typeof SCENARIOS)[number]
const only = (args.only?.split(',').map((s) => s.trim()) ??
  SCENARIOS.filter((s) => args.baseline !== undefined || !s.startsWith('baseline'))) as Scenario[]
if (args.baseline === undefined && only.some((s) => s.startsWith('baseline'))) {
  process.stderr.write('client-throughput: the baseline scenarios need --baseline DIR\n')
  process.exit(2)
}
for (const s of only) {
  if (!SCENARIOS.includes(s)) {
    process.stderr.write(
      `client-throughput: unknown scenario ${JSON.stringify(s)}; use ${SCENARIOS.join(', ')}\n`,
    )
    process.exit(2)
  }
}

const CLIENT_ID = 'bench-client'
const CLIENT_SECRET = 'bench-secret'
const SIM_MAIN = path.resolve(import.meta.dirname, '../../../simulators/enrichment-sim/src/main.ts')

async function startSim(): Promise<{ child: ChildProcess; url: string; tokenUrl: string }> {
  const child = spawn(
    process.execPath,
    [SIM_MAIN, '--port', '0', '--mutations', '0', '--latency-ms', latencyMs, '--shops', String(shops)],
    {
      env: { ...process.env, SIM_CLIENT_ID: CLIENT_ID, SIM_CLIENT_SECRET: CLIENT_SECRET, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  let out = ''
  for await (const chunk of child.stdout!) {
    out += String(chunk)
    const m = /listening on (\S+) \(token URL (\S+)\)/.exec(out)
    if (m !== null) {
      child.stdout!.resume()
      return { child, url: m[1]!, tokenUrl: m[2]! }
    }
  }
  throw new Error(`the simulator exited before listening; its output was:\n${out}`)
}

interface Measured {
  requests: number
  items: number
  wallMs: number
  cpuUs: number
}

/** Runs `workers` loops of `task` for `ms`, counting completions and this process's CPU. */
async function measure(workers: number, ms: number, task: (i: number) => Promise<number>): Promise<Measured> {
  let requests = 0
  let items = 0
  let next = 0
  const deadline = performance.now() + ms
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < deadline) {
        // Not `items += await ...`: that reads `items` before the await and loses concurrent updates.
        const n = await task(next++)
        items += n
        requests++
      }
    }),
  )
  const wallMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  return { requests, items, wallMs, cpuUs: cpu.user + cpu.system }
}

const sim = await startSim()
try {
  const agent = new Agent({ keepAliveTimeout: 4_000 })
  const tokenRes = await request(sim.tokenUrl, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    }).toString(),
  })
  const token = ((await tokenRes.body.json()) as { access_token: string }).access_token
  const samplesRes = await request(`${sim.url}/__admin/samples?count=2000&kind=card&outcome=found`, {
    dispatcher: agent,
  })
  const inputs = (
    (await samplesRes.body.json()) as { samples: Array<{ input: Record<string, string> }> }
  ).samples.map((s): CardTransactionInput => s.input)
  if (inputs.length === 0) throw new Error('the simulator returned no card samples')
  const batches = Array.from({ length: 20 }, (_, b) =>
    Array.from({ length: batchSize }, (_, k) => inputs[(b * batchSize + k) % inputs.length]!),
  )
  const headers = { accept: 'application/json', authorization: `Bearer ${token}` }

  const clientOptions = {
    baseUrl: sim.url,
    credentials: { type: 'oauth', clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
    limits: { maxConcurrent: Math.max(concurrency, batchConcurrency) },
  } as const
  const client = new EnrichmentClient(clientOptions)
  // The other tree's class has the same public surface; its private fields make it a distinct type.
  const baseline: Pick<EnrichmentClient, 'findByCardTransaction' | 'findByCardTransactionBatch' | 'close'> =
    args.baseline === undefined
      ? client
      : new (
          (await import(path.resolve(args.baseline, 'libs/enrichment-client/src/index.ts'))) as {
            EnrichmentClient: typeof EnrichmentClient
          }
        ).EnrichmentClient(clientOptions)
  const lookup =
    (c: typeof baseline) =>
    async (i: number): Promise<number> => {
      const found = await c.findByCardTransaction(inputs[i % inputs.length]!)
      if (found.status !== 'found') throw new Error(`client lookup answered ${found.status}`)
      return 1
    }
  const batch =
    (c: typeof baseline) =>
    async (i: number): Promise<number> =>
      (await c.findByCardTransactionBatch(batches[i % batches.length]!)).length

  const tasks: Record<Scenario, { workers: number; run: (i: number) => Promise<number> }> = {
    raw: {
      workers: concurrency,
      run: async (i) => {
        // The raw floor still encodes its input per request, as any caller must.
        const query = new URLSearchParams(inputs[i % inputs.length] as Record<string, string>).toString()
        const res = await request(`${sim.url}/v5/shops/findByCardTransaction?${query}`, {
          dispatcher: agent,
          headers,
        })
        const body = (await res.body.json()) as { shop?: unknown }
        if (res.statusCode !== 200 || body.shop === undefined)
          throw new Error(`raw lookup answered ${res.statusCode}`)
        return 1
      },
    },
    client: { workers: concurrency, run: lookup(client) },
    baseline: { workers: concurrency, run: lookup(baseline) },
    'raw-batch': {
      workers: batchConcurrency,
      run: async (i) => {
        const res = await request(`${sim.url}/v5/shops/findByCardTransactionBatch`, {
          method: 'POST',
          dispatcher: agent,
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ requests: batches[i % batches.length] }),
        })
        const body = (await res.body.json()) as unknown[]
        if (res.statusCode !== 200 || body.length !== batchSize)
          throw new Error(`raw batch answered ${res.statusCode}`)
        return body.length
      },
    },
    'client-batch': { workers: batchConcurrency, run: batch(client) },
    'baseline-batch': { workers: batchConcurrency, run: batch(baseline) },
  }

  process.stdout.write(
    `simulator pid ${sim.child.pid}, latency ${latencyMs} ms; ${concurrency} workers (batches: ${batchConcurrency} x ${batchSize}); ${rounds} rounds of ${durationMs} ms\n`,
  )
  if (warmupMs > 0) for (const s of only) await measure(tasks[s].workers, warmupMs, tasks[s].run)

  const totals = new Map<Scenario, Measured>()
  for (let round = 1; round <= rounds; round++) {
    for (const s of only) {
      const m = await measure(tasks[s].workers, durationMs, tasks[s].run)
      const t = totals.get(s) ?? { requests: 0, items: 0, wallMs: 0, cpuUs: 0 }
      totals.set(s, {
        requests: t.requests + m.requests,
        items: t.items + m.items,
        wallMs: t.wallMs + m.wallMs,
        cpuUs: t.cpuUs + m.cpuUs,
      })
      process.stdout.write(`round ${round} ${s.padEnd(13)} ${line(m)}\n`)
    }
  }
  process.stdout.write('\ntotal\n')
  for (const [s, m] of totals) process.stdout.write(`${s.padEnd(13)} ${line(m)}\n`)
  const ratio = (a: Scenario, b: Scenario): string => {
    const x = totals.get(a)
    const y = totals.get(b)
    if (x === undefined || y === undefined) return 'n/a'
    return `${(x.items / x.wallMs / (y.items / y.wallMs)).toFixed(2)}x rate, ${(x.cpuUs / x.requests / (y.cpuUs / y.requests)).toFixed(2)}x CPU/request`
  }
  process.stdout.write(`client vs raw:             ${ratio('client', 'raw')}\n`)
  process.stdout.write(`client-batch vs raw-batch: ${ratio('client-batch', 'raw-batch')}\n`)
  if (args.baseline !== undefined) {
    process.stdout.write(`baseline vs raw:             ${ratio('baseline', 'raw')}\n`)
    process.stdout.write(`baseline-batch vs raw-batch: ${ratio('baseline-batch', 'raw-batch')}\n`)
    process.stdout.write(`client vs baseline:             ${ratio('client', 'baseline')}\n`)
    process.stdout.write(`client-batch vs baseline-batch: ${ratio('client-batch', 'baseline-batch')}\n`)
  }

  await client.close()
  if (baseline !== client) await baseline.close()
  await agent.close()
} finally {
  sim.child.kill('SIGTERM')
  await once(sim.child, 'exit')
}

function line(m: Measured): string {
  const rate = (m.requests / m.wallMs) * 1000
  const itemRate = (m.items / m.wallMs) * 1000
  return (
    `${rate.toFixed(0).padStart(6)} req/s` +
    (m.items === m.requests ? '' : ` ${itemRate.toFixed(0).padStart(7)} lookups/s`) +
    `  ${(m.cpuUs / m.requests).toFixed(0).padStart(5)} µs CPU/req  (${m.requests} requests)`
  )
}
