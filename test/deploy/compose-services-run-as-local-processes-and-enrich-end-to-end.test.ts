/**
 * docker-compose.yml, executed: no Docker engine runs on the build machines, so
 * this reads the compose file and runs every service of ours as a local process,
 * as its container would run (test/deploy/compose-as-processes.ts does the
 * mapping; deploy/README.md "Compose, as the test runs it" describes it):
 *
 *   - entrypoint + command of each service (the Dockerfile's ENTRYPOINT when the
 *     service sets none), the image's ENV plus the service's environment, in the
 *     repository root (the image's WORKDIR /app holds the repo's folders), started
 *     in depends_on order once each condition holds: service_started,
 *     service_healthy (its healthcheck command run as written, `node` being this
 *     Node 24) and service_completed_successfully (exit 0).
 *   - The containers share the `netns` service's network namespace, so 127.0.0.1
 *     is the network they see; here it is this machine's loopback.
 *   - Broker and registry: a dedicated local stack (@tep/local-stack, the same
 *     Kafka 3.9.2 KRaft single node and Apicurio 3.3.3 in-memory that the file's
 *     images, deploy/kafka and deploy/registry, are built from) on exactly the
 *     compose addresses: Kafka 127.0.0.1:9092 with its KRaft controller on 29093,
 *     the registry on 8080 (the port inside the namespace; 8081 is only the host's
 *     published port). So no address in the file is rewritten, and the pipeline
 *     topics start empty, which the exactly-once check needs (the suite's shared
 *     stack holds other tests' records under the same topic names). The cost: the
 *     compose ports must be free, which the test checks first, naming any busy
 *     one. Their healthchecks run too: the registry's through sh and bash, the
 *     broker's `kafka-broker-api-versions` as the Kafka class it wraps, from the
 *     stack's own jars.
 *   - `${NAME:-default}` in the file is read with its default (NAME unset).
 *   - Named volumes (the ingest's table checkpoint) are fresh temp dirs; their
 *     container path is replaced by the dir where the environment names it.
 *   - `netns` runs too (an idle Node: the loopback here is its namespace).
 *   - Left out: the `monitoring` profile, Prometheus and Grafana: third-party UI
 *     images with nothing of ours to execute; their config is checked by promtool
 *     and the Grafana provisioning checks in test/ops, and the dashboard's queries
 *     run on a real Prometheus there. The `demo` profile (sample traffic) runs: it
 *     is what makes events flow. The file run by a real engine is
 *     test/deploy/compose-up-by-podman-compose-enriches-end-to-end-and-down-leaves-nothing.test.ts.
 *
 * Every spawned process group is killed in afterAll, also after a failure; each
 * process logs into a temp dir whose tails are printed when a test fails.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { fetchRuntime, findJava, runtimePaths, startStack, type RunningStack } from '@tep/local-stack'
import { createLogger } from '@tep/observability'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { waitFor } from '../support/wait-for.ts'
import { withDefaults } from './podman-compose-project.ts'
import {
  ComposeMapper,
  ComposeRun,
  dependsOn,
  imageConfig,
  repoRoot,
  type ComposeFile,
  type ComposeService,
  type ImageConfig,
} from './compose-as-processes.ts'

const logger = createLogger({ name: 'compose-test', level: 'info' })
// `${NAME:-default}` as compose interpolates it with NAME unset: the file's default ports.
const compose = parse(withDefaults(readFileSync(path.join(repoRoot, 'docker-compose.yml'), 'utf8')), {
  merge: true,
}) as ComposeFile
const dockerfile = readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8')
const services = compose.services

/** Replaced by the dedicated local stack (see the header). */
const FROM_LOCAL_STACK = ['kafka', 'registry']
/** Not run, and why. */
const LEFT_OUT: Record<string, string> = {
  prometheus:
    'monitoring profile: third-party UI image, nothing of ours to execute (promtool and a real Prometheus check its config in test/ops)',
  grafana:
    'monitoring profile: third-party UI image, nothing of ours to execute (its provisioning is checked in test/ops)',
}
const PROFILES = ['demo']

/**
 * The image a service builds from the Dockerfile (its `build.target`); undefined for the
 * broker's and registry's images (built from deploy/, replaced by the local stack).
 */
function imageOf(s: ComposeService): ImageConfig | undefined {
  if (s.build === undefined) return undefined
  if (typeof s.build !== 'string' && (s.build.context ?? '.') !== '.') return undefined
  const target = typeof s.build === 'string' ? undefined : s.build.target
  if (target === undefined)
    throw new Error(
      'a build without target: the Dockerfile last stage would be used, which this test does not resolve',
    )
  return imageConfig(dockerfile, target)
}

const OURS = Object.keys(services).filter(
  (n) =>
    imageOf(services[n]!) !== undefined && (services[n]!.profiles ?? []).every((p) => PROFILES.includes(p)),
)

const env = (name: string) => (services[name]!.environment ?? {}) as Record<string, string | number>
const portOf = (address: string, what: string) => {
  const m = /127\.0\.0\.1:(\d+)/.exec(address)
  if (!m) throw new Error(`${what}: no 127.0.0.1 port in "${address}"`)
  return Number(m[1])
}
const kafkaPort = portOf(String(env('kafka').KAFKA_ADVERTISED_LISTENERS), 'kafka KAFKA_ADVERTISED_LISTENERS')
const controllerPort = portOf(
  String(env('kafka').KAFKA_CONTROLLER_QUORUM_VOTERS),
  'kafka KAFKA_CONTROLLER_QUORUM_VOTERS',
)
// Apicurio's image listens on Quarkus' default 8080, which compose does not set: its healthcheck names it.
const registryPort = portOf([services.registry!.healthcheck!.test].flat().join(' '), 'registry healthcheck')
/** What the services are told, and what the check is run with: the compose file's own addresses. */
const pipelineEnv = {
  KAFKA_BROKERS: String(env('transaction-ingest').KAFKA_BROKERS),
  SCHEMA_REGISTRY_URL: String(env('transaction-ingest').SCHEMA_REGISTRY_URL),
}
const exporterMetrics = `http://127.0.0.1:${env('pipeline-exporter').METRICS_PORT}/metrics`

/**
 * Every port a process here listens on: the container side of netns' published
 * ports (but Prometheus' 9090 and Grafana's 3000, left out) and the KRaft controller.
 */
function composePorts(): number[] {
  const ports = new Set<number>([controllerPort])
  for (const mapping of services.netns!.ports ?? []) {
    const [from, to = from] = mapping.split(':').at(-1)!.split('-').map(Number) as [number, number?]
    for (let p = from; p <= to; p++) ports.add(p)
  }
  for (const p of [9090, 3000]) ports.delete(p)
  // The broker's HOST listener is published for the host; here the host reaches the stack's one listener.
  const hostListener = /HOST:\/\/[^:]+:(\d+)/.exec(String(env('kafka').KAFKA_LISTENERS))?.[1]
  if (hostListener !== undefined) ports.delete(Number(hostListener))
  ports.add(kafkaPort)
  return [...ports].sort((a, b) => a - b)
}

function busy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', () => resolve(true))
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(false)))
  })
}

interface CheckSummary {
  passed: boolean
  raw: { records: number }
  enriched: { records: number; byStatus: Record<string, number> }
  dlq: { records: number; byCode: Record<string, number> }
  lost: number
  duplicated: number
  dlqFromFaults: number
  unexpected: number
  samples: Record<string, unknown>
}

/** `npm run check-topics` as an operator runs it against this compose system: the pipeline's environment, no options. */
async function checkTopics(): Promise<{ code: number; summary: CheckSummary }> {
  const run = promisify(execFile)
  const options = {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', ...pipelineEnv },
    maxBuffer: 16 * 1024 * 1024,
  }
  try {
    const { stdout } = await run(
      process.execPath,
      ['tools/check-topics/src/main.ts', '--timeout', '60'],
      options,
    )
    return { code: 0, summary: JSON.parse(stdout) as CheckSummary }
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string }
    if (e.code !== 1) throw new Error(`check-topics exited ${e.code}: ${e.stderr}`, { cause: err })
    return { code: 1, summary: JSON.parse(e.stdout ?? '') as CheckSummary }
  }
}

/** The pipeline exporter's samples (Prometheus text format) of the metrics named, by name{labels}. */
async function exporterSamples(...names: string[]): Promise<Record<string, number>> {
  const text = await (await fetch(exporterMetrics)).text()
  const samples: Record<string, number> = {}
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line)
    if (m && names.includes(m[1]!)) samples[`${m[1]}${m[2] ?? ''}`] = Number(m[3])
  }
  return samples
}

/** The sum of the samples of `name` that carry every label given (the registry adds its own, e.g. service). */
function sumOf(samples: Record<string, number>, name: string, ...labels: string[]): number {
  return Object.entries(samples)
    .filter(([key]) => key === name || (key.startsWith(`${name}{`) && labels.every((l) => key.includes(l))))
    .reduce((sum, [, value]) => sum + value, 0)
}

describe('docker-compose.yml, each service run as a local process', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'tep-compose-run-'))
  let stack: RunningStack | undefined
  let run: ComposeRun | undefined
  let failed = false

  const diagnose = () => {
    failed = true
    process.stderr.write(
      `\n[compose] a step failed; logs in ${tmp}; their tails:\n${run?.diagnosis() ?? '(nothing started)'}\n`,
    )
  }
  // The steps build on each other: after a failed one the rest fail at once instead of waiting out their timeouts.
  beforeEach(({ onTestFailed }) => {
    if (failed) throw new Error('an earlier step failed (see its error and the logs printed with it)')
    onTestFailed(diagnose)
  })

  beforeAll(async () => {
    const taken = []
    for (const port of composePorts()) if (await busy(port)) taken.push(port)
    if (taken.length > 0)
      throw new Error(
        `compose ports busy on 127.0.0.1: ${taken.join(', ')} (a dev stack from npm run stack:up holds 9092, npm start 8181/8182/9464+); stop what holds them`,
      )
    await fetchRuntime({ log: (line) => logger.info(line) })
    const kafkaJava = await findJava({
      min: 17,
      homeVars: ['KAFKA_JAVA_HOME', 'JAVA_HOME'],
      purpose: 'the broker healthcheck (kafka-broker-api-versions)',
    })
    const mapper = new ComposeMapper(compose, imageOf, {
      imageTools: {
        // The image's Node 24 is this one (the tests run on the node@24 devDependency).
        node: [process.execPath],
        sh: ['sh'],
        // cp-kafka's /usr/bin/kafka-broker-api-versions runs this class on the broker's jars.
        'kafka-broker-api-versions': [
          kafkaJava.bin,
          '-cp',
          `${runtimePaths().kafkaLib}/*`,
          'kafka.admin.BrokerApiVersionsCommand',
        ],
      },
      volumeDirs: Object.fromEntries(
        Object.keys(compose.volumes ?? {}).map((v) => [v, mkdtempSync(path.join(tmp, `volume-${v}-`))]),
      ),
      // A container sees only its image's ENV and its environment; PATH and HOME are what every process needs.
      baseEnv: {
        PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        HOME: process.env.HOME ?? tmp,
      },
    })
    // The JVMs are children of this worker: a failed start stops its own, afterAll stops a started
    // one, and if even that is never reached they die with the worker (startStack's exit hook).
    const stackUp = startStack({
      stateDir: mkdtempSync(path.join(os.tmpdir(), 'tep-test-stack-compose-')),
      ports: { kafka: kafkaPort, controller: controllerPort, registry: registryPort },
      portHints: {
        kafka: 'docker-compose.yml kafka',
        controller: 'docker-compose.yml KAFKA_CONTROLLER_QUORUM_VOTERS',
        registry: 'docker-compose.yml registry',
      },
    }).then((s) => {
      stack = s
      logger.info(
        { broker: s.brokers, registry: s.registryUrl, timings: s.timings },
        'local stack up on the compose ports',
      )
    })
    stackUp.catch(() => {}) // awaited below; launch() awaits it again for kafka and registry
    run = new ComposeRun({
      compose,
      mapper,
      logDir: path.join(tmp, 'logs'),
      provided: new Map(FROM_LOCAL_STACK.map((n) => [n, stackUp])),
      logger,
    })
    await stackUp.catch((err: unknown) => {
      diagnose()
      throw err
    })
  }, 240_000)

  afterAll(async () => {
    await run?.killAll()
    await stack?.stop()
    if (!failed) rmSync(tmp, { recursive: true, force: true })
  }, 60_000)

  it('accounts for every service: run here, replaced by the local stack, or left out for a stated reason', () => {
    const all = Object.keys(services).sort()
    expect([...OURS, ...FROM_LOCAL_STACK, ...Object.keys(LEFT_OUT)].sort()).toEqual(all)
    expect(OURS).toEqual(
      expect.arrayContaining([
        'netns',
        'enrichment-sim',
        'bank-sim',
        'transaction-ingest',
        'refresher',
        'invalidation-poller',
        'bank-sync',
        'pipeline-exporter',
        'sample-traffic',
      ]),
    )
    // The mapping rewrites no address: the services are told the stack's own.
    expect(pipelineEnv).toEqual({
      KAFKA_BROKERS: `127.0.0.1:${kafkaPort}`,
      SCHEMA_REGISTRY_URL: `http://127.0.0.1:${registryPort}/apis/ccompat/v7`,
    })
    expect(stack?.brokers).toEqual([pipelineEnv.KAFKA_BROKERS])
    expect(stack?.registryUrl).toBe(pipelineEnv.SCHEMA_REGISTRY_URL)
  })

  it('starts every service in depends_on order and each healthcheck passes', async () => {
    const r = run!
    await r.guard(Promise.all(OURS.map((n) => r.launch(n))))
    // Also those nobody waits for with service_healthy: compose would report them unhealthy.
    const checked = [...FROM_LOCAL_STACK, ...OURS].filter((n) => services[n]!.healthcheck !== undefined)
    await r.guard(Promise.all(checked.map((n) => r.waitHealthy(n))))
    // Each service started only after each of its dependencies met its condition (the stack's two: when it was up).
    const at = (service: string, event: string): number | undefined =>
      r.timeline.find((e) => e.service === service && e.event === event)?.at ??
      (event === 'started' && FROM_LOCAL_STACK.includes(service) ? 0 : undefined)
    const EVENT = {
      service_started: 'started',
      service_healthy: 'healthy',
      service_completed_successfully: 'exited',
    } as const
    const early = OURS.flatMap((name) =>
      dependsOn(services[name]!)
        .filter((d) => {
          const met = at(d.service, EVENT[d.condition])
          const started = at(name, 'started')
          return met === undefined || started === undefined || started < met
        })
        .map((d) => `${name} started before ${d.service} was ${EVENT[d.condition]}`),
    )
    expect(early).toEqual([])
  }, 240_000)

  it('enriched events flow end to end: the pipeline exporter counts them and their latency', async () => {
    const r = run!
    let seen: Record<string, number> = {}
    const counted = await r.guard(
      waitFor(
        'at least 100 enriched records and their latencies on the pipeline exporter',
        async () => {
          seen = await exporterSamples('tep_topic_records_total', 'tep_end_to_end_latency_seconds_count')
          const enriched = sumOf(seen, 'tep_topic_records_total', 'topic="transactions.enriched.v1"')
          const latencies = sumOf(seen, 'tep_end_to_end_latency_seconds_count')
          return enriched >= 100 && latencies > 0 && { enriched, latencies }
        },
        { timeoutMs: 80_000, intervalMs: 1_000 },
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}; the exporter's last samples: ${JSON.stringify(seen)}`, {
          cause: err,
        })
      }),
    )
    logger.info(counted, 'enriched records counted by the exporter')
  }, 90_000)

  it('stopped as compose stops it, every raw event has exactly one outcome: check-topics finds 0 lost, 0 duplicated', async () => {
    const r = run!
    // `docker compose stop sample-traffic`: no new raw events, then wait until each one has its outcome.
    const traffic = await r.stop('sample-traffic')
    expect(traffic).toMatchObject({ code: 0, signal: null, killed: false })
    const drained = await r.guard(
      waitFor(
        'an outcome for every raw event (check-topics: 0 lost)',
        async () => {
          const { summary } = await checkTopics()
          return summary.lost === 0 && summary
        },
        { timeoutMs: 60_000, intervalMs: 1_000 },
      ),
    )
    logger.info({ raw: drained.raw.records, enriched: drained.enriched.records }, 'pipeline drained')

    // `docker compose down`: dependents first, each within its stop_grace_period. Exit code 0 means the
    // process handled SIGTERM itself, which a container's PID 1 must: the kernel gives PID 1 no default
    // action for it, so a process that relied on one would sit out the grace period and be SIGKILLed.
    const stopped = await r.down()
    const unclean = [...stopped].filter(([, s]) => s.killed || s.code !== 0)
    expect(unclean, JSON.stringify(Object.fromEntries(stopped))).toEqual([])

    // The verdict with nothing running any more: nothing can arrive after it.
    const { code, summary } = await checkTopics()
    logger.info({ summary }, 'check-topics after compose down')
    expect(summary).toMatchObject({ lost: 0, duplicated: 0, dlqFromFaults: 0, unexpected: 0 })
    expect(code).toBe(0)
    expect(summary.raw.records).toBeGreaterThanOrEqual(100)
    expect(summary.enriched.records).toBeGreaterThanOrEqual(100)
  }, 150_000)
})
