/**
 * `npm run stack:up | stack:down | stack:status | stack:fetch`.
 * Machine-readable lines (KAFKA_BROKERS=..., SCHEMA_REGISTRY_URL=...) go to stdout,
 * everything else to stderr, so `eval "$(node deploy/local/src/cli.ts up)"` works.
 */
import { existsSync } from 'node:fs'
import { readFile, rm, writeFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { LocalStackError } from './errors.ts'
import { fetchRuntime } from './fetch-runtime.ts'
import { acquireLock } from './file-lock.ts'
import { assertPortsAvailable, assertPortsFree, type StackPorts } from './ports.ts'
import { brokerAnswers, registryAnswers } from './readiness.ts'
import { startStack } from './stack.ts'
import { isOurProcess, kafkaNodesOf, readRecord, stopRecordedStack, type StackRecord } from './stack-record.ts'
import { APICURIO_VERSION, DEFAULT_CACHE_DIR, KAFKA_VERSION, REPO_ROOT } from './versions.ts'

const HELP = `Usage: node deploy/local/src/cli.ts <command> [options]
       npm run stack:up | stack:down | stack:status | stack:fetch

Runs Apache Kafka ${KAFKA_VERSION} (KRaft: one node, or a cluster with --brokers) and Apicurio Registry ${APICURIO_VERSION}
(Confluent-compatible API) as background processes on 127.0.0.1, without Docker.

Commands:
  up      fetch the runtime if needed, start both in the background, wait until both
          answer, print KAFKA_BROKERS=... and SCHEMA_REGISTRY_URL=... (stdout) and write
          them to the env file. Already running and healthy: prints the same lines.
  down    stop the processes 'up' started (only those), remove the state dir. Idempotent.
  status  print what runs and whether it answers. Exit 0 healthy, 1 unhealthy, 3 not running.
  fetch   download Kafka and Apicurio from Maven Central into the cache (needs mvn).

Options (each has an environment variable; flags win):
  --brokers <n>                   STACK_BROKERS                   Kafka nodes (default 1). With 3: a cluster of
                                                                  combined broker+controller nodes on kafka-port,
                                                                  kafka-port+1, kafka-port+2, every topic (internal
                                                                  ones too) at replication factor 3, min ISR 2
  --kafka-port <n>                STACK_KAFKA_PORT                broker port (default 9092; node 1 of a cluster)
  --registry-port <n>             STACK_REGISTRY_PORT             registry port (default 8081)
  --controller-port <n>           STACK_CONTROLLER_PORT           KRaft controller (default: any free port)
  --registry-management-port <n>  STACK_REGISTRY_MANAGEMENT_PORT  registry /health (default: any free port)
  --state-dir <dir>               STACK_DIR                       config, data, logs, pids (default .local/stack)
  --env-file <file>               STACK_ENV_FILE                  default .local/stack.env, or <state-dir>/stack.env
                                                                  when the state dir is not the default
  --cache-dir <dir>               STACK_CACHE_DIR                 runtime cache (default .cache)
  --timeout <seconds>             STACK_START_TIMEOUT             readiness deadline per process (default 120)
  -h, --help                      this text

Java: the broker needs Java 17+ (KAFKA_JAVA_HOME, JAVA_HOME, PATH, /usr/lib/jvm/*);
the registry needs Java 21+ (APICURIO_JAVA_HOME, JAVA_HOME, PATH, /usr/lib/jvm/*).
`

interface CliConfig {
  brokers: number
  stateDir: string
  envFile: string
  cacheDir: string
  ports: Partial<StackPorts>
  timeoutMs: number
}

const DEFAULT_STATE_DIR = path.join(REPO_ROOT, '.local/stack')

function parsePort(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined
  const port = Number(value)
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new LocalStackError(`${name} must be a port number 1-65535, got "${value}"`, {
      code: 'INVALID_OPTION',
    })
  }
  return port
}

function parseConfig(
  values: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv,
): CliConfig {
  const str = (flag: string, envName: string) =>
    (values[flag] as string | undefined) ?? env[envName] ?? undefined
  const stateDir = path.resolve(str('state-dir', 'STACK_DIR') ?? DEFAULT_STATE_DIR)
  const envFile = path.resolve(
    str('env-file', 'STACK_ENV_FILE') ??
      (stateDir === DEFAULT_STATE_DIR
        ? path.join(REPO_ROOT, '.local/stack.env')
        : path.join(stateDir, 'stack.env')),
  )
  const timeout = str('timeout', 'STACK_START_TIMEOUT') ?? '120'
  if (!/^\d+$/.test(timeout) || Number(timeout) < 1) {
    throw new LocalStackError(`--timeout / STACK_START_TIMEOUT must be whole seconds, got "${timeout}"`, {
      code: 'INVALID_OPTION',
    })
  }
  const ports: Partial<StackPorts> = {
    kafka: parsePort(str('kafka-port', 'STACK_KAFKA_PORT'), 'STACK_KAFKA_PORT / --kafka-port') ?? 9092,
    registry:
      parsePort(str('registry-port', 'STACK_REGISTRY_PORT'), 'STACK_REGISTRY_PORT / --registry-port') ?? 8081,
  }
  const brokers = str('brokers', 'STACK_BROKERS') ?? '1'
  if (!/^[1-9]$/.test(brokers)) {
    throw new LocalStackError(`--brokers / STACK_BROKERS must be a number of nodes 1-9, got "${brokers}"`, {
      code: 'INVALID_OPTION',
    })
  }
  const controller = parsePort(str('controller-port', 'STACK_CONTROLLER_PORT'), 'STACK_CONTROLLER_PORT')
  const management = parsePort(
    str('registry-management-port', 'STACK_REGISTRY_MANAGEMENT_PORT'),
    'STACK_REGISTRY_MANAGEMENT_PORT',
  )
  if (controller !== undefined) ports.controller = controller
  if (management !== undefined) ports.registryManagement = management
  return {
    brokers: Number(brokers),
    stateDir,
    envFile,
    cacheDir: path.resolve(str('cache-dir', 'STACK_CACHE_DIR') ?? DEFAULT_CACHE_DIR),
    ports,
    timeoutMs: Number(timeout) * 1000,
  }
}

const PORT_HINTS: Partial<Record<keyof StackPorts, string>> = {
  kafka: 'STACK_KAFKA_PORT or --kafka-port',
  controller: 'STACK_CONTROLLER_PORT or --controller-port',
  registry: 'STACK_REGISTRY_PORT or --registry-port',
  registryManagement: 'STACK_REGISTRY_MANAGEMENT_PORT or --registry-management-port',
}

const info = (line: string) => process.stderr.write(`[stack] ${line}\n`)

function envLines(brokers: string[], registryUrl: string): string {
  return `KAFKA_BROKERS=${brokers.join(',')}\nSCHEMA_REGISTRY_URL=${registryUrl}\n`
}

async function announce(config: CliConfig, brokers: string[], registryUrl: string): Promise<void> {
  const lines = envLines(brokers, registryUrl)
  await mkdir(path.dirname(config.envFile), { recursive: true })
  await writeFile(config.envFile, lines)
  process.stdout.write(lines)
  const shown = path.relative(process.cwd(), config.envFile)
  info(`wrote ${shown.startsWith('..') ? config.envFile : shown}`)
}

/** Every recorded process is ours and alive. */
function recordAlive(record: StackRecord, stateDir: string): boolean {
  return (
    kafkaNodesOf(record).every((n) => isOurProcess(n.pid, 'kafka', stateDir)) &&
    isOurProcess(record.registryPid, 'registry', stateDir)
  )
}

/** Client ports of nodes 2..n: right after node 1's. */
function extraKafkaPorts(config: CliConfig): number[] {
  const first = config.ports.kafka ?? 9092
  return Array.from({ length: config.brokers - 1 }, (_, i) => first + i + 1)
}

/** Serialises up/down on one state dir: a second `up` waits for the first and then finds it running. */
function lockStack(config: CliConfig) {
  return acquireLock(`${config.stateDir}.lock`, {
    timeoutMs: 10 * 60_000,
    onWait: (pid) => info(`another stack command (pid ${pid}) is working on ${config.stateDir}; waiting`),
  })
}

async function up(config: CliConfig): Promise<number> {
  const lock = await lockStack(config)
  try {
    const record = await readRecord(config.stateDir)
    if (record && recordAlive(record, config.stateDir)) {
      const [kafkaOk, registryOk] = await Promise.all([
        brokerAnswers(record.brokers),
        registryAnswers(record.registryUrl),
      ])
      if (kafkaOk && registryOk) {
        const pids = kafkaNodesOf(record).map((n) => n.pid)
        info(`already running (broker pid${pids.length > 1 ? 's' : ''} ${pids.join(', ')}, registry pid ${record.registryPid})`)
        if (
          record.ports.kafka !== config.ports.kafka ||
          record.ports.registry !== config.ports.registry ||
          kafkaNodesOf(record).length !== config.brokers
        ) {
          info(`note: it runs with the ports and brokers it was started with; run stack:down first to change them`)
        }
        await announce(config, record.brokers, record.registryUrl)
        return 0
      }
      info(
        `found a stack that does not answer (broker ${kafkaOk ? 'ok' : 'down'}, registry ${registryOk ? 'ok' : 'down'}); restarting it`,
      )
    }
    // Leftovers of a crashed or half-started stack: stop what is still ours, wipe the folder.
    const leftovers = await stopRecordedStack(config.stateDir)
    for (const p of leftovers.stopped) info(`stopped leftover ${p.role} (pid ${p.pid})`)

    // Fail fast on a busy port, before a first-time fetch spends half a minute.
    await assertPortsFree(config.ports, PORT_HINTS)
    const extraPorts = extraKafkaPorts(config)
    await assertPortsAvailable(
      extraPorts.map((port, i) => ({ port, role: `Kafka broker ${i + 2}`, hint: 'STACK_KAFKA_PORT or --kafka-port (nodes 2..n use the next ports)' })),
    )
    await fetchRuntime({ cacheDir: config.cacheDir, log: info })
    const kafkaPorts = [config.ports.kafka, ...extraPorts].map((p) => `127.0.0.1:${p}`).join(', ')
    info(
      `starting Kafka ${KAFKA_VERSION} (${config.brokers === 1 ? 'one node' : `${config.brokers} nodes`}) on ${kafkaPorts} and Apicurio ${APICURIO_VERSION} on 127.0.0.1:${config.ports.registry}`,
    )
    const stack = await startStack({
      stateDir: config.stateDir,
      cacheDir: config.cacheDir,
      ports: config.ports,
      detached: true,
      ownerPid: null,
      startTimeoutMs: config.timeoutMs,
      portHints: PORT_HINTS,
      brokers: config.brokers,
      extraKafkaPorts: extraPorts,
    })
    info(
      `ready: ${stack.nodes.length === 1 ? 'broker' : `${stack.nodes.length} brokers`} in ${(stack.timings.kafkaReadyMs / 1000).toFixed(1)} s (pid ${stack.nodes.map((n) => n.pid).join(', ')}), ` +
        `registry in ${(stack.timings.registryReadyMs / 1000).toFixed(1)} s (pid ${stack.pids.registry}); ` +
        `logs in ${stack.stateDir}`,
    )
    await announce(config, stack.brokers, stack.registryUrl)
    return 0
  } finally {
    await lock.release()
  }
}

async function down(config: CliConfig): Promise<number> {
  const lock = await lockStack(config)
  try {
    const record = await readRecord(config.stateDir)
    const report = await stopRecordedStack(config.stateDir)
    if (record && existsSync(config.envFile)) {
      // Only remove the env file if it still describes this stack.
      const text = await readFile(config.envFile, 'utf8').catch(() => '')
      if (text === envLines(record.brokers, record.registryUrl)) await rm(config.envFile, { force: true })
    }
    if (!record) info('not running (no record in ' + config.stateDir + ')')
    for (const p of report.stopped) info(`stopped ${p.role} (pid ${p.pid}, ${p.how})`)
    for (const p of report.skipped) info(`${p.role} (pid ${p.pid}) was no longer running`)
    return 0
  } finally {
    await lock.release()
  }
}

async function status(config: CliConfig): Promise<number> {
  const record = await readRecord(config.stateDir)
  if (!record) {
    info(`not running (no record in ${config.stateDir})`)
    return 3
  }
  const nodes = kafkaNodesOf(record)
  const kafkaAlive = nodes.every((n) => isOurProcess(n.pid, 'kafka', config.stateDir))
  const registryAlive = isOurProcess(record.registryPid, 'registry', config.stateDir)
  const [kafkaOk, registryOk] = await Promise.all([
    kafkaAlive ? brokerAnswers(record.brokers) : false,
    registryAlive ? registryAnswers(record.registryUrl) : false,
  ])
  const state = (alive: boolean, ok: boolean) =>
    !alive ? 'not running' : ok ? 'answering' : 'running, not answering'
  for (const n of nodes) {
    const alive = isOurProcess(n.pid, 'kafka', config.stateDir)
    info(`broker ${n.nodeId} pid ${n.pid}: ${state(alive, alive && kafkaOk)}`)
  }
  info(`brokers ${record.brokers.join(',')}`)
  info(`registry pid ${record.registryPid}: ${state(registryAlive, registryOk)} (${record.registryUrl})`)
  info(`started ${record.startedAt}; logs in ${config.stateDir}`)
  if (!kafkaAlive && !registryAlive) return 3
  if (kafkaOk && registryOk) {
    process.stdout.write(envLines(record.brokers, record.registryUrl))
    return 0
  }
  return 1
}

async function fetchCommand(config: CliConfig): Promise<number> {
  const report = await fetchRuntime({ cacheDir: config.cacheDir, log: info })
  info(
    report.fetched.length === 0
      ? `Kafka ${KAFKA_VERSION} and Apicurio ${APICURIO_VERSION} already in ${config.cacheDir}`
      : `fetched ${report.fetched.join(' and ')} into ${config.cacheDir}`,
  )
  return 0
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'kafka-port': { type: 'string' },
      brokers: { type: 'string' },
      'registry-port': { type: 'string' },
      'controller-port': { type: 'string' },
      'registry-management-port': { type: 'string' },
      'state-dir': { type: 'string' },
      'env-file': { type: 'string' },
      'cache-dir': { type: 'string' },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  const command = positionals[0]
  if (values.help || command === 'help') {
    process.stdout.write(HELP)
    return 0
  }
  if (command === undefined || positionals.length > 1) {
    process.stderr.write(
      command === undefined
        ? 'missing command\n\n'
        : `unexpected arguments: ${positionals.slice(1).join(' ')}\n\n`,
    )
    process.stderr.write(HELP)
    return 2
  }
  const config = parseConfig(values, process.env)
  switch (command) {
    case 'up':
      return up(config)
    case 'down':
      return down(config)
    case 'status':
      return status(config)
    case 'fetch':
      return fetchCommand(config)
    default:
      process.stderr.write(`unknown command "${command}"\n\n${HELP}`)
      return 2
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (err: unknown) => {
    if (err instanceof LocalStackError) {
      process.stderr.write(`[stack] error ${err.code}: ${err.message}\n`)
    } else if (err instanceof Error && 'code' in err && err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      process.stderr.write(`${err.message}\n\n${HELP}`)
      process.exitCode = 2
      return
    } else {
      process.stderr.write(
        `[stack] unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      )
    }
    process.exitCode = 1
  },
)
