import { spawn, spawnSync } from 'node:child_process'
import { closeSync, openSync, readFileSync, readlinkSync } from 'node:fs'
import path from 'node:path'
import { LocalStackError } from './errors.ts'
import { isProcessRunning, waitForExit } from './process-control.ts'
import { brokerAnswers, registryAnswers } from './readiness.ts'
import { isOurProcess, kafkaNodesOf, readRecord, writeRecord } from './stack-record.ts'

export interface RestartOptions {
  /** How the running process is stopped: SIGKILL (a crash) or SIGTERM (a clean, controlled shutdown). Default SIGKILL. */
  signal?: 'SIGKILL' | 'SIGTERM'
  /** Time the process stays down before it is started again. Default 0. */
  downMs?: number
  /** Deadline for the new process to answer. Default 120 s. */
  startTimeoutMs?: number
  /** Which Kafka node of a cluster (1-based). Default 1. */
  nodeId?: number
}

export interface RestartReport {
  role: 'kafka' | 'registry'
  /** The Kafka node restarted (1 for the registry's report, meaningless there). */
  nodeId: number
  oldPid: number
  newPid: number
  /** Milliseconds from the signal until the new process answered. */
  outageMs: number
}

/**
 * Stops one process of a running stack (`startStack` or `stack:up`) and starts it
 * again with the very same command line, environment and working directory (read
 * from /proc before the signal, so Linux only), appending to the same log, and
 * updates `stack.json` so `stop()` and `stack:down` stop the new process. The broker
 * keeps its KRaft data dir: this is a broker restart, not a new cluster. (The
 * registry keeps its schemas in memory, so a registry restart starts empty.)
 * Resolves once the restarted process answers a real request.
 */
export async function restartStackProcess(
  stateDir: string,
  role: 'kafka' | 'registry',
  options: RestartOptions = {},
): Promise<RestartReport> {
  const record = await readRecord(stateDir)
  if (!record) throw new LocalStackError(`no stack record in ${stateDir}`, { code: 'STARTUP_FAILED', details: { stateDir } })
  const nodeId = options.nodeId ?? 1
  const nodes = kafkaNodesOf(record)
  const node = nodes.find((n) => n.nodeId === nodeId)
  if (role === 'kafka' && node === undefined)
    throw new LocalStackError(`the stack in ${stateDir} has no Kafka node ${nodeId}`, { code: 'INVALID_OPTION', details: { stateDir } })
  const oldPid = role === 'kafka' ? node!.pid : record.registryPid
  if (!isOurProcess(oldPid, role, stateDir))
    throw new LocalStackError(`the ${role} process ${oldPid} of ${stateDir} is not running`, { code: 'STARTUP_FAILED', details: { stateDir } })
  const argv = readFileSync(`/proc/${oldPid}/cmdline`, 'utf8').split('\0').filter((a, i, all) => a !== '' || i < all.length - 1)
  const env = Object.fromEntries(
    readFileSync(`/proc/${oldPid}/environ`, 'utf8')
      .split('\0')
      .filter((e) => e.includes('='))
      .map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
  )
  const cwd = readlinkSync(`/proc/${oldPid}/cwd`)
  // A node placed in a named network namespace (the fault suite's partitions) comes
  // back in the same one, on the same address: read before the signal, as the
  // command line is (the namespace's name is not in /proc/<pid>/cmdline).
  const netns = namedNetworkNamespaceOf(oldPid)
  const command = netns === undefined ? argv : ['ip', 'netns', 'exec', netns, ...argv]

  const signalledAt = Date.now()
  process.kill(oldPid, options.signal ?? 'SIGKILL')
  if (!(await waitForExit(oldPid, 60_000))) {
    process.kill(oldPid, 'SIGKILL')
    await waitForExit(oldPid, 10_000)
  }
  if (options.downMs) await new Promise((r) => setTimeout(r, options.downMs))

  const logFile = path.join(stateDir, role === 'kafka' ? (nodeId === 1 ? 'kafka.log' : `kafka-${nodeId}.log`) : 'registry.log')
  const fd = openSync(logFile, 'a')
  let child
  try {
    child = spawn(command[0]!, command.slice(1), { cwd, env, stdio: ['ignore', fd, fd], detached: record.ownerPid === null })
    child.on('error', () => {})
  } finally {
    closeSync(fd)
  }
  const newPid = child.pid ?? -1
  if (record.ownerPid === null) child.unref()
  else process.once('exit', () => child.exitCode === null && child.kill('SIGKILL'))
  // Re-read: another node may have been restarted meanwhile (a rolling restart in parallel with a kill).
  const latest = (await readRecord(stateDir)) ?? record
  await writeRecord(
    role === 'kafka'
      ? {
          ...latest,
          ...(nodeId === 1 ? { kafkaPid: newPid } : {}),
          ...(latest.kafkaNodes === undefined
            ? {}
            : { kafkaNodes: latest.kafkaNodes.map((n) => (n.nodeId === nodeId ? { ...n, pid: newPid } : n)) }),
        }
      : { ...latest, registryPid: newPid },
  )

  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000)
  for (;;) {
    if (!isProcessRunning(newPid))
      throw new LocalStackError(`the restarted ${role} (pid ${newPid}) exited; see ${logFile}`, { code: 'STARTUP_FAILED', details: { logFile } })
    // The restarted node itself must answer and see every node again, not merely any node of the cluster.
    const nodeBroker = record.kafkaNodes?.find((n) => n.nodeId === nodeId)
    const answers =
      role === 'kafka'
        ? await brokerAnswers(nodeBroker === undefined ? record.brokers : [`${nodeBroker.host ?? '127.0.0.1'}:${nodeBroker.port}`], 3_000, nodes.length)
        : await registryAnswers(record.registryUrl)
    if (answers) break
    if (Date.now() > deadline)
      throw new LocalStackError(`the restarted ${role} did not answer in time; see ${logFile}`, { code: 'STARTUP_TIMEOUT', retriable: true, details: { logFile } })
    await new Promise((r) => setTimeout(r, 250))
  }
  return { role, nodeId, oldPid, newPid, outageMs: Date.now() - signalledAt }
}

/**
 * The name `ip netns` knows `pid`'s network namespace by, or undefined when the
 * process shares this one's (or no `ip` is installed): `ip netns identify`
 * compares /proc/<pid>/ns/net with the names under /run/netns.
 */
export function namedNetworkNamespaceOf(pid: number): string | undefined {
  const result = spawnSync('ip', ['netns', 'identify', String(pid)], { encoding: 'utf8' })
  if (result.status !== 0) return undefined
  const name = result.stdout.trim().split('\n')[0]?.trim()
  return name === undefined || name === '' ? undefined : name
}
