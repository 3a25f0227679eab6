import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, openSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import {
  prepareSecureListener,
  scramFormatArgs,
  withSecureListener,
  type SecureListener,
  type SecureListenerOptions,
} from './secure-listener.ts'
import { LocalStackError } from './errors.ts'
import { isRuntimeCached } from './fetch-runtime.ts'
import { findJava } from './java.ts'
import { assertPortsAvailable, assertPortsFree, choosePorts, distinctPortPicker, type StackPorts } from './ports.ts'
import { terminateChild } from './process-control.ts'
import { KAFKA_STARTED_LINE, log4jProperties, replicationFor, serverProperties } from './config-files.ts'
import {
  NotReadyError,
  tail,
  waitForBroker,
  waitForLogLine,
  waitForRegistry,
  type ExitCheck,
} from './readiness.ts'
import { stackMarker, stopRecordedStack, writeRecord, type KafkaNodeRecord, type StackRecord } from './stack-record.ts'
import {
  APICURIO_VERSION,
  DEFAULT_CACHE_DIR,
  KAFKA_MIN_JAVA,
  KAFKA_VERSION,
  REGISTRY_MIN_JAVA,
  runtimePaths,
} from './versions.ts'

export interface StartStackOptions {
  /** Where config, data, logs and `stack.json` go. Created if missing; its previous content is replaced. */
  stateDir: string
  /** Fixed ports; roles left out get free ephemeral ports. */
  ports?: Partial<StackPorts>
  /** `java` binary for the registry (needs 21+); found automatically when absent. */
  registryJava?: string
  /** `java` binary for the broker (needs 17+); found automatically when absent. */
  kafkaJava?: string
  /** Where `fetchRuntime` put the runtime. Default `<repo>/.cache`. */
  cacheDir?: string
  /**
   * Detached processes outlive this one (`stack:up`); attached ones die with it and
   * are also killed from an exit hook if `stop()` is never called.
   */
  detached?: boolean
  /** Recorded in `stack.json` so a later run can reap the stack if this owner dies. Default: this process when attached. */
  ownerPid?: number | null
  /** Per-process readiness deadline. Default 120 s (two JVMs on two busy cores). */
  startTimeoutMs?: number
  /** Named in the "port busy" message, e.g. `{ kafka: 'STACK_KAFKA_PORT or --kafka-port' }`. */
  portHints?: Partial<Record<keyof StackPorts, string>>
  /** Also open a SASL_SSL listener (generated CA, PLAIN and SCRAM-SHA-512 users). Single broker only. */
  secureListener?: SecureListenerOptions
  /**
   * Number of Kafka nodes (combined broker+controller, KRaft). Default 1. With 3 or
   * more: replication factor 3 and min.insync.replicas 2 for every topic, internal
   * ones included. Node 1 uses `ports.kafka`/`ports.controller`; the others get
   * `extraKafkaPorts` or free ports.
   */
  brokers?: number
  /** Client ports of nodes 2..n (e.g. `[9093, 9094]`); free ports when absent. */
  extraKafkaPorts?: number[]
  /**
   * Where each Kafka node runs, node 1 first: the address it listens on and
   * advertises, and a command its JVM is started under (e.g.
   * `['ip', 'netns', 'exec', 'ns1']`, which execs, so the pid is the JVM's).
   * Default: every node on 127.0.0.1, started directly. The fault suite's
   * network partitions put each node in its own network namespace this way.
   */
  nodePlacement?: NodePlacement[]
  /** Interface the registry listens on. Default 127.0.0.1; `0.0.0.0` lets processes in other network namespaces reach it. */
  registryHost?: string
}

export interface NodePlacement {
  host: string
  commandPrefix?: string[]
}

/** One Kafka node of a running stack. */
export interface RunningKafkaNode {
  nodeId: number
  /** `<host>:<port>` (127.0.0.1 unless placed elsewhere) */
  broker: string
  host: string
  port: number
  controllerPort: number
  pid: number
  logFile: string
}

export interface RunningStack {
  brokers: string[]
  /** The Confluent-compatible (ccompat v7) API, ready for @kafkajs/confluent-schema-registry's `host`. */
  registryUrl: string
  ports: StackPorts
  /** Node 1's pid in `kafka`; every node's in `nodes`. */
  pids: { kafka: number; registry: number }
  /** Every Kafka node, node 1 first (one entry for a single broker). */
  nodes: RunningKafkaNode[]
  /** What the stack's topics get by default: replication factor and min.insync.replicas. */
  replication: { replicationFactor: number; minInsyncReplicas: number }
  stateDir: string
  /** Milliseconds from spawn until each answered. */
  timings: { kafkaReadyMs: number; registryReadyMs: number }
  /** The SASL_SSL listener, when asked for. */
  secure?: SecureListener
  /**
   * SIGTERM both, wait up to 15 s, SIGKILL, remove stateDir. Idempotent. `{ kill: true }`:
   * SIGKILL at once, for a throwaway stack whose data is removed with it anyway: a controlled
   * shutdown then only costs time (5-11 s for a three-node cluster on two cores).
   */
  stop(options?: { kill?: boolean }): Promise<void>
}

const KAFKA_JVM = [
  '-Xms128m',
  '-Xmx512m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-Djava.awt.headless=true',
]
const REGISTRY_JVM = ['-Xms64m', '-Xmx384m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1']

/**
 * Starts a single-node KRaft broker and an Apicurio registry (in-memory H2) on
 * 127.0.0.1 and resolves once both answer real requests: a KafkaJS
 * `describeCluster()` and `GET /apis/ccompat/v7/subjects`. On failure everything
 * started is stopped and the error carries the tail of the failing log.
 */
export async function startStack(options: StartStackOptions): Promise<RunningStack> {
  const cacheDir = options.cacheDir ?? DEFAULT_CACHE_DIR
  const runtime = runtimePaths(cacheDir)
  if (!isRuntimeCached(cacheDir)) {
    throw new LocalStackError(
      `Kafka ${KAFKA_VERSION} and Apicurio ${APICURIO_VERSION} are not in ${cacheDir} yet; run \`npm run stack:fetch\` first.`,
      { code: 'RUNTIME_MISSING', details: { cacheDir } },
    )
  }
  const stateDir = path.resolve(options.stateDir)
  const detached = options.detached ?? false
  const timeoutMs = options.startTimeoutMs ?? 120_000

  const [kafkaJava, registryJava] = await Promise.all([
    options.kafkaJava ??
      findJava({
        min: KAFKA_MIN_JAVA,
        homeVars: ['KAFKA_JAVA_HOME', 'JAVA_HOME'],
        purpose: `The Kafka ${KAFKA_VERSION} broker`,
      }).then((j) => j.bin),
    options.registryJava ??
      findJava({
        min: REGISTRY_MIN_JAVA,
        homeVars: ['APICURIO_JAVA_HOME', 'JAVA_HOME'],
        purpose: `The schema registry (Apicurio ${APICURIO_VERSION})`,
      }).then((j) => j.bin),
  ])
  const brokerCount = options.brokers ?? 1
  if (!Number.isInteger(brokerCount) || brokerCount < 1 || brokerCount > 9) {
    throw new LocalStackError(`brokers must be a whole number 1-9, got ${brokerCount}`, { code: 'INVALID_OPTION' })
  }
  if (brokerCount > 1 && options.secureListener !== undefined) {
    throw new LocalStackError('the SASL_SSL listener is only offered on a single-broker stack', { code: 'INVALID_OPTION' })
  }
  const ports = await choosePorts(options.ports)
  const extra = await extraNodePorts(brokerCount, options.extraKafkaPorts ?? [], ports)
  await assertPortsFree(ports, options.portHints)
  await assertPortsAvailable(
    extra.flatMap((p, i) => [
      { port: p.kafka, role: `Kafka broker ${i + 2}` },
      { port: p.controller, role: `Kafka controller ${i + 2}` },
    ]),
  )

  // A data dir formatted with another cluster id refuses to start, so always begin empty.
  await rm(stateDir, { recursive: true, force: true })
  await mkdir(stateDir, { recursive: true })
  const nodeSpecs = [{ kafka: ports.kafka, controller: ports.controller }, ...extra].map((p, i) => {
    const nodeId = i + 1
    // Node 1 keeps the file names of a single-broker stack.
    const suffix = nodeId === 1 ? '' : `-${nodeId}`
    const placement = options.nodePlacement?.[i]
    return {
      nodeId,
      host: placement?.host ?? '127.0.0.1',
      commandPrefix: placement?.commandPrefix ?? [],
      port: p.kafka,
      controllerPort: p.controller,
      dataDir: path.join(stateDir, `data${suffix}`),
      propertiesFile: path.join(stateDir, `server${suffix}.properties`),
      logFile: path.join(stateDir, `kafka${suffix}.log`),
      formatLog: path.join(stateDir, `format${suffix}.log`),
    }
  })
  const files = {
    log4j: path.join(stateDir, 'log4j.properties'),
    registryLog: path.join(stateDir, 'registry.log'),
  }
  const secure =
    options.secureListener === undefined ? undefined : await prepareSecureListener(stateDir, options.secureListener)
  if (options.nodePlacement !== undefined && options.nodePlacement.length !== brokerCount) {
    throw new LocalStackError(`nodePlacement names ${options.nodePlacement.length} nodes, the stack has ${brokerCount}`, { code: 'INVALID_OPTION' })
  }
  const voters = nodeSpecs.map((n) => ({ nodeId: n.nodeId, controllerPort: n.controllerPort, host: n.host }))
  for (const node of nodeSpecs) {
    await mkdir(node.dataDir, { recursive: true })
    const properties = serverProperties({
      nodeId: node.nodeId,
      kafkaPort: node.port,
      controllerPort: node.controllerPort,
      dataDir: node.dataDir,
      voters,
      host: node.host,
    })
    await writeFile(node.propertiesFile, secure === undefined ? properties : withSecureListener(properties, secure))
  }
  await writeFile(files.log4j, log4jProperties())

  const marker = stackMarker(stateDir)
  const kafkaBase = [
    ...KAFKA_JVM,
    `-Dlog4j.configuration=file:${files.log4j}`,
    marker,
    // The wildcard is expanded by java itself; spawn uses no shell, so it arrives intact.
    '-cp',
    path.join(runtime.kafkaLib, '*'),
  ]

  const clusterId = newClusterId()
  // Every node's log dir is formatted with the same cluster id; the JVMs start one after another (two cores).
  for (const node of nodeSpecs) {
    const format = launch(
      kafkaJava,
      [
        ...kafkaBase,
        'kafka.tools.StorageTool',
        'format',
        '-t',
        clusterId,
        '-c',
        node.propertiesFile,
        '--ignore-formatted',
        ...(secure === undefined ? [] : scramFormatArgs(secure)),
      ],
      { cwd: stateDir, logFile: node.formatLog, detached: false, commandPrefix: node.commandPrefix },
    )
    const formatCode = await new Promise<number | null>((resolve) => format.once('exit', resolve))
    if (formatCode !== 0) {
      throw new LocalStackError(
        `formatting the KRaft log dir of node ${node.nodeId} failed (exit ${formatCode}); ${node.formatLog}:\n${await tail(node.formatLog)}`,
        { code: 'STARTUP_FAILED', details: { stateDir } },
      )
    }
  }

  const spawnedAt = Date.now()
  const kafkaNodes = nodeSpecs.map((node) => ({
    ...node,
    child: launch(kafkaJava, [...kafkaBase, 'kafka.Kafka', node.propertiesFile], {
      cwd: stateDir,
      logFile: node.logFile,
      detached,
      commandPrefix: node.commandPrefix,
    }),
  }))
  const kafka = kafkaNodes[0]!.child
  const registry = launch(
    registryJava,
    [...REGISTRY_JVM, marker, '-jar', path.join(runtime.apicurioDir, 'quarkus-run.jar')],
    {
      // Not the cache folder: whatever Quarkus writes belongs to this stack's state.
      cwd: stateDir,
      logFile: files.registryLog,
      detached,
      env: {
        QUARKUS_HTTP_HOST: options.registryHost ?? '127.0.0.1',
        QUARKUS_HTTP_PORT: String(ports.registry),
        QUARKUS_MANAGEMENT_HOST: '127.0.0.1',
        QUARKUS_MANAGEMENT_PORT: String(ports.registryManagement),
        QUARKUS_LOG_CONSOLE_COLOR: 'false',
        // The default H2 pool (20 connections) is sized for production, not a test box.
        APICURIO_DATASOURCE_JDBC_INITIAL_SIZE: '2',
        APICURIO_DATASOURCE_JDBC_MIN_SIZE: '2',
      },
    },
  )

  const brokers = kafkaNodes.map((n) => `${n.host}:${n.port}`)
  const nodeRecords: KafkaNodeRecord[] = kafkaNodes.map((n) => ({
    nodeId: n.nodeId,
    pid: n.child.pid ?? -1,
    port: n.port,
    controllerPort: n.controllerPort,
    host: n.host,
    logFile: n.logFile,
    propertiesFile: n.propertiesFile,
  }))
  const registryUrl = `http://127.0.0.1:${ports.registry}/apis/ccompat/v7`
  const record: StackRecord = {
    version: 1,
    stateDir,
    ports,
    brokers,
    registryUrl,
    kafkaPid: kafka.pid ?? -1,
    kafkaNodes: nodeRecords,
    registryPid: registry.pid ?? -1,
    ownerPid: options.ownerPid !== undefined ? options.ownerPid : detached ? null : process.pid,
    startedAt: new Date().toISOString(),
  }
  // Written before waiting, so an interrupted start can still be cleaned up from the record.
  await writeRecord(record)

  // Last resort for attached stacks: if this process exits without stop(), take the JVMs with it.
  const killOnExit = () => {
    for (const child of [...kafkaNodes.map((n) => n.child), registry]) if (child.exitCode === null) child.kill('SIGKILL')
  }
  if (!detached) process.once('exit', killOnExit)

  let stopped: Promise<void> | undefined
  const stop = (options: { kill?: boolean } = {}): Promise<void> => {
    stopped ??= (async () => {
      process.removeListener('exit', killOnExit)
      const graceMs = options.kill ? 0 : undefined
      await Promise.all([...kafkaNodes.map((n) => terminateChild(n.child, graceMs)), terminateChild(registry, graceMs)])
      // Children are gone; this also removes the state dir and ends the nodes a restart put in their
      // place (restartStackProcess records their pids), killed at once too when asked.
      await stopRecordedStack(stateDir, graceMs)
    })()
    return stopped
  }

  const deadline = spawnedAt + timeoutMs
  const timings = { kafkaReadyMs: 0, registryReadyMs: 0 }
  try {
    await Promise.all([
      ...kafkaNodes.map((node) =>
        (async () => {
          const exited = exitCheck(node.child)
          await waitForLogLine(node.logFile, KAFKA_STARTED_LINE, deadline, exited)
          // Every node registered: a client bootstrapped now sees the whole cluster.
          await waitForBroker([`${node.host}:${node.port}`], deadline, exited, kafkaNodes.length)
          timings.kafkaReadyMs = Math.max(timings.kafkaReadyMs, Date.now() - spawnedAt)
        })().catch(async (err) => {
          throw await notReady(err, `Kafka broker ${node.nodeId} (${node.host}:${node.port})`, node.logFile, timeoutMs, node.child)
        }),
      ),
      (async () => {
        await waitForRegistry(registryUrl, deadline, exitCheck(registry))
        timings.registryReadyMs = Date.now() - spawnedAt
      })().catch(async (err) => {
        throw await notReady(err, `schema registry (${registryUrl})`, files.registryLog, timeoutMs, registry)
      }),
    ])
  } catch (err) {
    // Keep the logs for a post-mortem, stop the processes; the message already has the tail.
    process.removeListener('exit', killOnExit)
    await Promise.all([...kafkaNodes.map((n) => terminateChild(n.child)), terminateChild(registry)])
    for (const node of nodeSpecs) await rm(node.dataDir, { recursive: true, force: true })
    throw err
  }

  if (detached) {
    for (const n of kafkaNodes) n.child.unref()
    registry.unref()
  }
  return {
    brokers,
    registryUrl,
    ports,
    pids: { kafka: record.kafkaPid, registry: record.registryPid },
    nodes: nodeRecords.map((n) => ({
      nodeId: n.nodeId,
      broker: `${n.host ?? '127.0.0.1'}:${n.port}`,
      host: n.host ?? '127.0.0.1',
      port: n.port,
      controllerPort: n.controllerPort,
      pid: n.pid,
      logFile: n.logFile,
    })),
    replication: replicationFor(brokerCount),
    stateDir,
    timings,
    ...(secure === undefined
      ? {}
      : {
          secure: {
            port: secure.port,
            brokers: secure.brokers,
            caFile: secure.caFile,
            ca: secure.ca,
            plain: secure.plain,
            scram: secure.scram,
          },
        }),
    stop,
  }
}

/** Client and controller ports of nodes 2..count: the given client ports, free ones otherwise, none repeated. */
async function extraNodePorts(
  count: number,
  given: number[],
  taken: StackPorts,
): Promise<Array<{ kafka: number; controller: number }>> {
  const used = new Set<number>([...Object.values(taken), ...given])
  const picker = distinctPortPicker()
  const free = async (): Promise<number> => {
    for (;;) {
      const port = await picker()
      if (!used.has(port)) {
        used.add(port)
        return port
      }
    }
  }
  const out: Array<{ kafka: number; controller: number }> = []
  for (let i = 0; i < count - 1; i++) out.push({ kafka: given[i] ?? (await free()), controller: await free() })
  return out
}

interface LaunchOptions {
  cwd: string
  logFile: string
  detached: boolean
  env?: Record<string, string>
  /** A command `java` runs under (`ip netns exec <ns>`); it must exec, so the child's pid stays the JVM's. */
  commandPrefix?: string[]
}

/** Spawns `java` with stdout and stderr appended to `logFile` (files, not pipes, so a detached JVM never blocks on a dead reader). */
function launch(java: string, args: string[], options: LaunchOptions): ChildProcess {
  const fd = openSync(options.logFile, 'a')
  try {
    const [command, ...rest] = [...(options.commandPrefix ?? []), java, ...args]
    const child = spawn(command!, rest, {
      cwd: options.cwd,
      detached: options.detached,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, ...options.env },
    })
    // Without a listener an ENOENT would crash the process; the exit check reports it instead.
    child.on('error', () => {})
    return child
  } finally {
    closeSync(fd)
  }
}

function exitCheck(child: ChildProcess): ExitCheck {
  let spawnError: Error | undefined
  child.once('error', (err) => (spawnError = err))
  return () => {
    if (spawnError) return `could not be started (${spawnError.message})`
    if (child.exitCode !== null) return `exited with code ${child.exitCode}`
    if (child.signalCode !== null) return `was killed by ${child.signalCode}`
    return undefined
  }
}

async function notReady(err: unknown, what: string, logFile: string, timeoutMs: number, child: ChildProcess) {
  if (!(err instanceof NotReadyError)) return err
  const logTail = existsSync(logFile) ? await tail(logFile) : '(no log written)'
  const why =
    err.reason === 'timeout'
      ? `did not answer within ${Math.round(timeoutMs / 1000)} s`
      : `stopped before it answered (pid ${child.pid}: ${err.message.split(': ').pop()})`
  return new LocalStackError(`${what} ${why}. Last lines of ${logFile}:\n${logTail}`, {
    code: err.reason === 'timeout' ? 'STARTUP_TIMEOUT' : 'STARTUP_FAILED',
    retriable: err.reason === 'timeout',
    details: { logFile },
  })
}

/**
 * A 22-character base64url UUID, as Kafka's own `Uuid.randomUuid()` makes them.
 * One in 64 of those starts with '-', which StorageTool's argument parser reads
 * as an option ("--cluster-id expected one argument"): Kafka regenerates such
 * ids for the same reason, and so do we.
 */
export function newClusterId(random: (size: number) => Buffer = randomBytes): string {
  for (;;) {
    const id = random(16).toString('base64url')
    if (!id.startsWith('-')) return id
  }
}
