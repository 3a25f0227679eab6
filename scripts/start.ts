/**
 * `npm start`: the whole pipeline on embedded defaults — a Kafka broker and
 * schema registry, both API simulators, every service as its own process, sample
 * traffic, and a live view of what flows. Ctrl-C stops everything it started.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { AvroSerde, TOPICS, TOPIC_CATALOG, createKafka, createRecordProducer, createSchemaRegistry, ensureTopics } from '@tep/kafka'
import { SimDataset } from '@tep/sim-data'
import { grantSampleConsents } from './start/bank-consents.ts'
import { SampleTraffic } from './start/card-traffic.ts'
import { waitForHttp } from './start/child-service.ts'
import { LiveView, WATCHED } from './start/live-view.ts'
import { PipelineExporter } from './start/pipeline-exporter.ts'
import { obtainStack } from './start/stack.ts'
import { ContractDriftPoller } from './start/contract-drift-poll.ts'
import { ReadinessPoller, renderScreen, renderSummaryLine, takeSnapshot, type Watched } from './start/status-report.ts'
import { DEFAULT_RESTART_POLICY, SupervisedService } from './start/supervisor.ts'
import { distinctPortPicker } from '@tep/local-stack'
import { INGEST_NODE_OPTIONS } from '@tep/transaction-ingest'
import { refresherMallocEnv } from '@tep/refresher'

const HELP = `usage: npm start [-- options]

Runs the whole pipeline locally: Kafka + schema registry (reused when
KAFKA_BROKERS/SCHEMA_REGISTRY_URL are set or 'npm run stack:up' runs), the
enrichment and bank simulators, every service, sample traffic and a live view.
Service logs go to .local/start/logs/. A service or simulator that exits is
started again after a growing delay (1 s, 2 s, 4 s ... 30 s); the view counts
restarts. Ctrl-C stops everything.

The view shows events per second per topic, consumer lag per group, end-to-end
latency p50/p99 and why a service is not ready (e.g. the reason of a pause). The
same figures are served for Prometheus by the pipeline exporter (job
pipeline-exporter), and every scrape target is written as a Prometheus file_sd
list (see docs/operations.md).

options:
  --rate N          raw events per second of sample traffic (default 20; 0 = none)
  --brokers N       Kafka nodes of the private stack: 1 (default) or 3, a KRaft cluster
                    with replication factor 3 and min.insync.replicas 2
  --duration S      stop after S seconds (default: run until Ctrl-C)
  --expect-flow     with --duration: exit 1 unless enriched events flowed and every
                    service was ready at the end (used by the test suite)
  --no-ui           print one JSON object per line (every --interval) instead of
                    the live view; supervisor events are JSON lines too
  --interval S      seconds between two refreshes (default 1 in a terminal, 5 otherwise)
  --exporter-port N port of the pipeline exporter's /metrics (default 9465, else any free one)
  --targets-file F  where to write the Prometheus file_sd targets
                    (default .local/start/prometheus-targets.json)
  --contract-drift SEED
                    run both simulators in their contract-drift mode with this seed:
                    they answer in every shape the interface descriptions leave open
                    (other JSON types, absent or unknown fields, a refused 'level',
                    missing findBy variants, token answers without expires_in, bare
                    401s, trailing-slash variants), as a real API may; the view's
                    'API drift' line shows what the services tolerated
  -h, --help        this text`

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const say = (line: string) => process.stderr.write(`${line}\n`)

// Credentials shared by the simulators (which accept them) and the services (which use them).
const SIM_CREDENTIALS = { clientId: 'tep-demo-client', clientSecret: 'tep-demo-secret' }

/** Runs a script under supervision: restarted with backoff when it exits. */
function supervisor(onEvent: (line: string) => void) {
  return (options: ConstructorParameters<typeof SupervisedService>[0]) => new SupervisedService(options, DEFAULT_RESTART_POLICY, onEvent)
}

interface ServiceSpec {
  name: string
  script: string
  env: NodeJS.ProcessEnv
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      help: { type: 'boolean', short: 'h' },
      rate: { type: 'string' },
      brokers: { type: 'string' },
      duration: { type: 'string' },
      'expect-flow': { type: 'boolean' },
      'no-ui': { type: 'boolean' },
      interval: { type: 'string' },
      'exporter-port': { type: 'string' },
      'targets-file': { type: 'string' },
      'contract-drift': { type: 'string' },
    },
  })
  if (values.help) {
    process.stdout.write(`${HELP}\n`)
    return 0
  }
  const rate = Number(values.rate ?? '20')
  const brokerCount = Number(values.brokers ?? '1')
  if (brokerCount !== 1 && brokerCount !== 3) throw new Error(`--brokers must be 1 or 3, got ${values.brokers}`)
  const duration = values.duration === undefined ? undefined : Number(values.duration)
  if (!Number.isFinite(rate) || rate < 0) throw new Error(`--rate must be a non-negative number, got ${values.rate}`)
  if (duration !== undefined && !(duration > 0)) throw new Error(`--duration must be a positive number of seconds, got ${values.duration}`)
  const noUi = values['no-ui'] === true
  const tty = process.stdout.isTTY === true && !noUi
  const intervalS = Number(values.interval ?? (tty ? '1' : '5'))
  if (!(intervalS > 0)) throw new Error(`--interval must be a positive number of seconds, got ${values.interval}`)
  const exporterPort = values['exporter-port'] === undefined ? undefined : Number(values['exporter-port'])
  if (exporterPort !== undefined && !(Number.isInteger(exporterPort) && exporterPort >= 0 && exporterPort < 65536)) throw new Error(`--exporter-port must be a port number, got ${values['exporter-port']}`)
  const driftSeed = values['contract-drift']
  if (driftSeed !== undefined && !/^\d+$/.test(driftSeed)) throw new Error(`--contract-drift takes a seed, a whole number, got ${driftSeed}`)
  const driftArgs = driftSeed === undefined ? [] : [`--contract-drift=${driftSeed}`]
  const targetsFile = path.resolve(values['targets-file'] ?? path.join(repoRoot, '.local', 'start', 'prometheus-targets.json'))
  const jsonLine = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`)
  const event = (line: string) => (noUi ? jsonLine({ time: new Date().toISOString(), event: line }) : say(line))
  const spawnService = supervisor(event)

  const logDir = path.join(repoRoot, '.local', 'start', 'logs')
  mkdirSync(logDir, { recursive: true })
  const cleanups: Array<() => Promise<void>> = []
  const stopAll = async () => {
    for (const c of cleanups.reverse()) await c().catch((err: unknown) => say(`stop step failed: ${(err as Error).message}`))
  }
  let stopping = false
  const onSignal = () => {
    if (stopping) process.exit(1)
    stopping = true
    say('\nstopping ...')
    void stopAll().then(() => process.exit(0))
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  try {
    const stack = await obtainStack(repoRoot, say, brokerCount)
    cleanups.push(() => stack.stop())
    say(`Kafka ${stack.brokers.join(',')} · registry ${stack.registryUrl} (${stack.origin})`)

    const kafka = createKafka({ brokers: stack.brokers, clientId: 'tep-start' })
    await ensureTopics(kafka, TOPIC_CATALOG)

    const base: NodeJS.ProcessEnv = { ...process.env, KAFKA_BROKERS: stack.brokers.join(','), SCHEMA_REGISTRY_URL: stack.registryUrl, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' }
    const children: SupervisedService[] = []
    cleanups.push(async () => {
      await Promise.all(children.map((c) => c.stop()))
    })

    // Ports are picked before the later servers listen: never the same one twice.
    const freePort = distinctPortPicker()
    const enrichmentPort = await freePort(8181)
    const enrichmentUrl = `http://127.0.0.1:${enrichmentPort}`
    const enrichmentSim = spawnService({
      name: 'enrichment-sim',
      script: 'simulators/enrichment-sim/src/main.ts',
      args: ['--port', String(enrichmentPort), '--mutations', '30', ...driftArgs],
      env: { ...base, SIM_CLIENT_ID: SIM_CREDENTIALS.clientId, SIM_CLIENT_SECRET: SIM_CREDENTIALS.clientSecret },
      logDir,
      cwd: repoRoot,
    })
    children.push(enrichmentSim)
    await waitForHttp(`${enrichmentUrl}/__admin/stats`, enrichmentSim)
    say(`enrichment simulator ${enrichmentUrl}`)

    // bank-sync's consent gateway is the redirect URI registered at the bank simulator.
    const gatewayPort = await freePort(8190)
    const bankRedirectUri = `http://127.0.0.1:${gatewayPort}/consents/callback`
    let bankUrl: string | undefined
    if (existsSync(path.join(repoRoot, 'simulators/bank-sim/src/main.ts'))) {
      const bankPort = await freePort(8182)
      const bankSim = spawnService({ name: 'bank-sim', script: 'simulators/bank-sim/src/main.ts', args: ['--port', String(bankPort), ...driftArgs], env: { ...base, SIM_BANK_REDIRECT_URI: bankRedirectUri }, logDir, cwd: repoRoot })
      children.push(bankSim)
      await waitForHttp(`http://127.0.0.1:${bankPort}/__admin/stats`, bankSim)
      bankUrl = `http://127.0.0.1:${bankPort}`
      say(`bank simulator ${bankUrl}`)
    }

    const enrichmentEnv = { ENRICHMENT_API_URL: enrichmentUrl, ENRICHMENT_CLIENT_ID: SIM_CREDENTIALS.clientId, ENRICHMENT_CLIENT_SECRET: SIM_CREDENTIALS.clientSecret }
    const specs: ServiceSpec[] = [
      // glibc's mmap threshold (services/refresher/src/runtime.ts), unless the user set one.
      { name: 'refresher', script: 'services/refresher/src/main.ts', env: { ...refresherMallocEnv(process.env), ...enrichmentEnv } },
      { name: 'invalidation-poller', script: 'services/invalidation-poller/src/main.ts', env: { ...enrichmentEnv, INVALIDATIONS_POLL_INTERVAL: '5s' } },
      // A larger young generation (services/transaction-ingest/README.md, "Runtime"), after the user's own NODE_OPTIONS.
      // The table checkpoint: a restart (supervisor or a new npm start on the same stack) replays only what is new.
      { name: 'transaction-ingest', script: 'services/transaction-ingest/src/main.ts', env: { ...enrichmentEnv, NODE_OPTIONS: [process.env.NODE_OPTIONS, INGEST_NODE_OPTIONS].filter(Boolean).join(' '), INGEST_STATE_DIR: process.env.INGEST_STATE_DIR ?? path.join(repoRoot, '.local', 'start', 'ingest-state') } },
    ]
    const health: Array<{ name: string; url: string; service: SupervisedService }> = []
    for (const spec of specs) {
      if (!existsSync(path.join(repoRoot, spec.script))) {
        say(`(${spec.name} is not part of this checkout yet; skipped)`)
        continue
      }
      const port = await freePort()
      const child = spawnService({ name: spec.name, script: spec.script, env: { ...base, ...spec.env, METRICS_PORT: String(port) }, logDir, cwd: repoRoot })
      children.push(child)
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, child)
      health.push({ name: spec.name, url: `http://127.0.0.1:${port}`, service: child })
      say(`${spec.name} started (metrics ${health.at(-1)!.url}/metrics, log ${path.relative(repoRoot, child.logFile)})`)
    }

    // ---- bank-sync: consent gateway + sync, and two sample consents granted through the gateway ----
    if (bankUrl !== undefined && existsSync(path.join(repoRoot, 'services/bank-sync/src/main.ts'))) {
      const port = await freePort()
      const gatewayUrl = `http://127.0.0.1:${gatewayPort}`
      const bankSync = spawnService({
        name: 'bank-sync',
        script: 'services/bank-sync/src/main.ts',
        // No TOKEN_ENCRYPTION_KEY / CONSENT_GATEWAY_CUSTOMER_TOKEN_KEY: the explicit switch lets bank-sync use its
        // public, logged DEVELOPMENT keys against the loopback simulator (never inferred from the address).
        env: { ...base, BANK_SYNC_DEVELOPMENT_KEYS: 'true', METRICS_PORT: String(port), BANK_API_URL: bankUrl, BANK_REDIRECT_URI: bankRedirectUri, CONSENT_GATEWAY_PORT: String(gatewayPort), SYNC_INTERVAL: '30s', SYNC_JITTER: '5s', BANK_SYNC_INSTANCE_ID: 'bank-sync-0' },
        logDir,
        cwd: repoRoot,
      })
      children.push(bankSync)
      await waitForHttp(`${gatewayUrl}/healthz`, bankSync)
      health.push({ name: 'bank-sync', url: `http://127.0.0.1:${port}`, service: bankSync })
      const consents = await grantSampleConsents({
        gatewayUrl,
        bankUrl,
        users: [
          { username: 'user1', customerId: 'demo-customer-1' },
          { username: 'user2', customerId: 'demo-customer-2' },
        ],
      })
      say(`bank-sync started (gateway ${gatewayUrl}, metrics http://127.0.0.1:${port}/metrics); sample consents ${consents.join(', ')}`)
    }
    // ---- end of bank-sync step ----

    const serde = new AvroSerde({ registry: createSchemaRegistry({ url: stack.registryUrl }) })
    const rawCodec = serde.topic(TOPICS.transactionsRaw, 'RawTransaction')
    const enrichedCodec = serde.topic(TOPICS.transactionsEnriched, 'EnrichedTransaction')
    const exporter = new PipelineExporter({ kafka, topics: WATCHED, port: exporterPort ?? (await freePort(9465)) })
    await exporter.start()
    cleanups.push(() => exporter.stop())
    const view = new LiveView({ kafka, enriched: enrichedCodec, exporter })
    await view.start()
    cleanups.push(() => view.stop())
    writeTargetsFile(targetsFile, [...health.map((h) => ({ job: h.name, url: h.url })), { job: 'pipeline-exporter', url: exporter.url! }])
    say(`pipeline exporter ${exporter.url}/metrics · Prometheus targets in ${path.relative(process.cwd(), targetsFile) || targetsFile}`)

    const producer = createRecordProducer(kafka)
    cleanups.push(() => producer.close())
    const traffic = new SampleTraffic({ producer, codec: rawCodec, dataset: new SimDataset(), ratePerSecond: rate, topic: TOPICS.transactionsRaw, runId: Date.now().toString(36) })
    if (rate > 0) {
      traffic.start()
      cleanups.push(() => traffic.stop())
    }

    const healthUrls = new Map(health.map((h) => [h.service, h.url]))
    const watched: Watched[] = children.map((service) => ({ service, ...(healthUrls.has(service) ? { healthUrl: healthUrls.get(service)! } : {}) }))
    const readiness = new ReadinessPoller()
    const drift = new ContractDriftPoller()
    const pollReadiness = () => Promise.all([readiness.poll(watched), drift.poll(health.map((h) => h.url))]).then(() => undefined)
    const startedAt = Date.now()
    const snapshot = () => takeSnapshot({ startedAt, produced: traffic.produced, view, exporter, watched, readiness, contractDrift: drift.drift })
    const render = () => {
      const snap = snapshot()
      if (noUi) jsonLine(snap)
      else if (tty) {
        const header = `transaction enrichment pipeline · up ${snap.uptimeSeconds} s · sample traffic ${rate}/s · Ctrl-C stops`
        process.stdout.write(`\x1b[2J\x1b[H${renderScreen(snap, header, view.recent)}\n`)
      } else process.stdout.write(`${renderSummaryLine(snap)}\n`)
    }
    let rendering: Promise<void> = Promise.resolve()
    const ticker = setInterval(() => {
      rendering = rendering.then(pollReadiness).then(render)
    }, intervalS * 1000)
    cleanups.push(async () => {
      clearInterval(ticker)
      await rendering
    })

    if (duration === undefined) return await new Promise<number>(() => {})
    await new Promise((r) => setTimeout(r, duration * 1000))
    await rendering
    await pollReadiness()
    render()
    const flowed = (view.statuses.get('MATCHED') ?? 0) > 0
    const notReady = [...readiness.health.entries()].filter(([, v]) => v.ready === false).map(([n, v]) => [n, v.text] as const)
    stopping = true
    await stopAll()
    if (values['expect-flow'] && (!flowed || notReady.length > 0)) {
      say(`expected flow: matched=${view.statuses.get('MATCHED') ?? 0}, not ready: ${notReady.map(([n, v]) => `${n} ${v}`).join(', ') || 'none'}`)
      return 1
    }
    return 0
  } catch (err) {
    say(`npm start failed: ${(err as Error).message}`)
    stopping = true
    await stopAll()
    return 1
  }
}

/** Prometheus file_sd: one target group per job, so `job` names the service as in deploy/prometheus. */
function writeTargetsFile(file: string, targets: Array<{ job: string; url: string }>): void {
  mkdirSync(path.dirname(file), { recursive: true })
  const groups = targets.map((t) => ({ targets: [new URL(t.url).host], labels: { job: t.job } }))
  writeFileSync(file, `${JSON.stringify(groups, null, 2)}\n`)
}

process.exitCode = await main()
process.exit()
